// When a scheduled campaign is due: its sendAt read in its time zone, with the DST rules spelled out.
import { DateTime, IANAZone } from 'luxon';

const HAS_OFFSET = /(Z|[+-]\d{2}:?\d{2})$/i;
const HOUR_MS = 3_600_000;

/**
 * The instant `sendAt` names. With an offset (`Z`, `+02:00`) it is that instant, whatever the zone. Without one it
 * is a wall-clock time in `zone`:
 * - a time the clocks skip (spring forward, e.g. 02:30 on 2026-03-29 in Europe/Paris) moves forward by the gap
 *   (03:30 CEST), so it is sent as soon as that local time exists;
 * - a time that happens twice (fall back, e.g. 02:30 on 2026-10-25 in Europe/Paris) takes the earlier offset
 *   (CEST, +02:00): the first of the two occurrences.
 */
export function resolveSendAt(sendAt: string, zone: string): Date {
  if (HAS_OFFSET.test(sendAt)) return new Date(DateTime.fromISO(sendAt, { setZone: true }).toMillis());
  const tz = IANAZone.create(zone);
  // The wall time's digits read as if they were UTC, then shifted by each offset the zone has around that time.
  const wall = DateTime.fromISO(sendAt, { zone: 'utc' }).toMillis();
  const before = tz.offset(wall - 24 * HOUR_MS);
  const after = tz.offset(wall + 24 * HOUR_MS);
  const fits = [before, after]
    .map((offset) => wall - offset * 60_000)
    .filter((instant) => wall - tz.offset(instant) * 60_000 === instant);
  // Both fit: ambiguous, the earlier instant is the earlier offset. None fits: a gap, read with the offset before it.
  return new Date(fits.length > 0 ? Math.min(...fits) : wall - before * 60_000);
}

/** The instant as the wall time of `zone` with its offset, e.g. `2026-03-29T03:30:00.000+02:00`. */
export function localIso(instant: Date, zone: string): string {
  return DateTime.fromJSDate(instant, { zone }).toISO()!;
}

/** The zones furthest ahead of and behind UTC: a local-time send spans the 26 hours between them. */
const FIRST_ZONE = 'UTC+14';
const LAST_ZONE = 'UTC-12';

/**
 * A local-time send of `sendAt` (read in `zone`): its wall-clock time (`2026-12-01T09:00:00`), which each recipient
 * gets in its own zone, and when the first and the last zones on Earth reach it.
 */
export function localTimeWindow(sendAt: Date, zone: string): { wallClock: string; first: Date; last: Date } {
  const wallClock = DateTime.fromJSDate(sendAt, { zone }).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS");
  const at = (edge: string) => new Date(DateTime.fromISO(wallClock, { zone: edge }).toMillis());
  return { wallClock, first: at(FIRST_ZONE), last: at(LAST_ZONE) };
}
