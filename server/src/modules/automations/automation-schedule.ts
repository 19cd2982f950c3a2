// Schedule triggers: a 5-field cron expression read in each subscriber's timezone (croner does the zone and DST arithmetic).
import { Cron } from 'croner';

const cronOf = (expression: string, timezone: string) => new Cron(expression, { timezone, paused: true, mode: '5-part' });

export function isValidCron(expression: string): boolean {
  try {
    cronOf(expression, 'UTC');
    return true;
  } catch {
    return false;
  }
}

/** Every zone this runtime knows: a subscriber's timezone outside it is read as the trigger's default zone. */
export const KNOWN_ZONES: readonly string[] = [...Intl.supportedValuesOf('timeZone'), 'UTC'];

/**
 * The zones in which `expression` fires in the window (from, to]. A local time the clocks skip (02:30 on the night
 * they go forward) fires at the first instant after the gap; one that happens twice (going back) fires once, at its
 * first occurrence.
 */
export function zonesFiring(expression: string, from: Date, to: Date, zones: readonly string[] = KNOWN_ZONES): string[] {
  return zones.filter((zone) => {
    const next = cronOf(expression, zone).nextRun(from);
    return next !== null && next.getTime() <= to.getTime();
  });
}
