// Schedule triggers: a 5-field cron expression read on each subscriber's wall clock (luxon knows the zones' offsets).
import { Cron } from 'croner';
import { IANAZone } from 'luxon';

const DAY_MS = 86_400_000;

// Matched against wall-clock times written as UTC dates: a zone's DST is handled by wallClockShown, not by croner.
const cronOf = (expression: string) => new Cron(expression, { timezone: 'UTC', paused: true, mode: '5-part' });

export function isValidCron(expression: string): boolean {
  try {
    cronOf(expression);
    return true;
  } catch {
    return false;
  }
}

/** Every zone this runtime knows: a subscriber's timezone outside it is read as the trigger's default zone. */
export const KNOWN_ZONES: readonly string[] = [...Intl.supportedValuesOf('timeZone'), 'UTC'];

/**
 * The latest wall-clock time `zone` has shown by the instant `at`, written as a UTC date. It moves with the clock,
 * except after the clocks go back: the times they show again were shown already, so it stays until they are passed.
 */
function wallClockShown(zone: IANAZone, at: number): number {
  const offset = zone.offset(at);
  const shown = at + offset * 60_000;
  // Clocks that went back by `back` show again, for `back` after they did, the times they had shown.
  const back = (zone.offset(at - DAY_MS) - offset) * 60_000;
  if (back <= 0 || zone.offset(at - back) === offset) return shown;
  // They went back within `back`: the wall clock of the last millisecond before they did.
  let [before, after] = [at - back, at];
  while (after - before > 1) {
    const middle = Math.floor((before + after) / 2);
    if (zone.offset(middle) === offset) after = middle;
    else before = middle;
  }
  return Math.max(shown, before + zone.offset(before) * 60_000);
}

/**
 * The zones in which `expression` fires in the window (from, to]: those whose wall clock first reaches a time it names
 * in the window. A local time the clocks skip (02:30 on the night they go forward) is reached at the first instant
 * after the gap, with every other skipped time; one that happens twice (going back) is reached once, the first time.
 */
export function zonesFiring(expression: string, from: Date, to: Date, zones: readonly string[] = KNOWN_ZONES): string[] {
  const cron = cronOf(expression);
  // Zones at the same offset share their wall clock: the next time named after it is found once.
  const nextTimes = new Map<number, number | undefined>();
  return zones.filter((name) => {
    const zone = IANAZone.create(name);
    const start = wallClockShown(zone, from.getTime());
    if (!nextTimes.has(start)) nextTimes.set(start, cron.nextRun(new Date(start))?.getTime());
    const next = nextTimes.get(start);
    return next !== undefined && next <= wallClockShown(zone, to.getTime());
  });
}
