// Schedule triggers read in each subscriber's zone, as the minute tick evaluates them: both DST transitions in both
// hemispheres and in a zone without DST, several times of one hour, weekly local times, and malformed expressions.
import { describe, expect, it } from 'vitest';
import { isValidCron, zonesFiring } from './automation-schedule.js';

const MINUTE = 60_000;
const ZONES = ['Europe/Paris', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata'];

/**
 * The ticks (their ends, ISO) at which `expression` fired in each zone, evaluating one window of `step` ms after
 * another from `start` for `hours`, as the minute tick does.
 */
function ticks(expression: string, start: string, hours: number, zones: readonly string[] = ZONES, step = MINUTE): Record<string, string[]> {
  const fired: Record<string, string[]> = Object.fromEntries(zones.map((zone) => [zone, []]));
  const from = Date.parse(start);
  for (let at = from; at < from + hours * 3_600_000; at += step) {
    for (const zone of zonesFiring(expression, new Date(at), new Date(at + step), zones)) fired[zone]!.push(new Date(at + step).toISOString());
  }
  return fired;
}

describe('zonesFiring across DST', () => {
  it('fires a local 02:30 that the clocks skip once, at the first instant after the gap', () => {
    // Paris: 2026-03-29 02:00 CET → 03:00 CEST. New York: 2026-03-08 02:00 EST → 03:00 EDT. Sydney (spring in
    // October): 2026-10-04 02:00 AEST → 03:00 AEDT.
    expect(ticks('30 2 * * *', '2026-03-28T12:00:00Z', 24, ['Europe/Paris'])['Europe/Paris']).toEqual(['2026-03-29T01:00:00.000Z']);
    expect(ticks('30 2 * * *', '2026-03-07T18:00:00Z', 24, ['America/New_York'])['America/New_York']).toEqual(['2026-03-08T07:00:00.000Z']);
    expect(ticks('30 2 * * *', '2026-10-03T06:00:00Z', 24, ['Australia/Sydney'])['Australia/Sydney']).toEqual(['2026-10-03T16:00:00.000Z']);
  });

  it('fires a local time that happens twice once, at its first occurrence', () => {
    // Paris: 2026-10-25 03:00 CEST → 02:00 CET. New York: 2026-11-01 02:00 EDT → 01:00 EST (01:30 twice). Sydney
    // (autumn in April): 2026-04-05 03:00 AEDT → 02:00 AEST.
    expect(ticks('30 2 * * *', '2026-10-24T12:00:00Z', 24, ['Europe/Paris'])['Europe/Paris']).toEqual(['2026-10-25T00:30:00.000Z']);
    expect(ticks('30 1 * * *', '2026-10-31T18:00:00Z', 24, ['America/New_York'])['America/New_York']).toEqual(['2026-11-01T05:30:00.000Z']);
    expect(ticks('30 2 * * *', '2026-04-04T06:00:00Z', 24, ['Australia/Sydney'])['Australia/Sydney']).toEqual(['2026-04-04T15:30:00.000Z']);
  });

  it('fires every time of a skipped hour once, together after the gap; every time of a repeated hour once', () => {
    const spring = ticks('0,30 2 * * *', '2026-03-28T12:00:00Z', 24, ['Europe/Paris'])['Europe/Paris'];
    expect(spring).toEqual(['2026-03-29T01:00:00.000Z']);
    const autumn = ticks('*/15 2 * * *', '2026-10-24T12:00:00Z', 24, ['Europe/Paris'])['Europe/Paris'];
    expect(autumn).toEqual(['2026-10-25T00:00:00.000Z', '2026-10-25T00:15:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-25T00:45:00.000Z']);
    // 02:30 and 03:30 on the night 02:00–03:00 happens twice: each once.
    expect(ticks('30 2,3 * * *', '2026-10-24T12:00:00Z', 24, ['Europe/Paris'])['Europe/Paris']).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-25T02:30:00.000Z']);
    // A time just at the end of the repeated hour exists once, in the second pass.
    expect(ticks('0 3 * * *', '2026-10-24T12:00:00Z', 24, ['Europe/Paris'])['Europe/Paris']).toEqual(['2026-10-25T02:00:00.000Z']);
  });

  it('keeps a zone without DST on its own clock through the others’ transitions', () => {
    for (const start of ['2026-03-28T12:00:00Z', '2026-10-24T12:00:00Z']) {
      // 02:30 IST (UTC+05:30) is 21:00 UTC the day before, every day.
      expect(ticks('30 2 * * *', start, 24)['Asia/Kolkata']).toEqual([`${start.slice(0, 10)}T21:00:00.000Z`]);
    }
  });

  it('fires "Mondays 9:00 local" in each zone at its own instant, before and after the transitions', () => {
    // 2026-03-02: every zone on standard time in the north, summer time in Sydney.
    expect(ticks('0 9 * * 1', '2026-03-01T12:00:00Z', 28)).toEqual({
      'Australia/Sydney': ['2026-03-01T22:00:00.000Z'],
      'Asia/Kolkata': ['2026-03-02T03:30:00.000Z'],
      'Europe/Paris': ['2026-03-02T08:00:00.000Z'],
      'America/New_York': ['2026-03-02T14:00:00.000Z'],
    });
    // 2026-04-06: New York and Paris have gone forward, Sydney back.
    expect(ticks('0 9 * * 1', '2026-04-05T12:00:00Z', 28)).toEqual({
      'Australia/Sydney': ['2026-04-05T23:00:00.000Z'],
      'Asia/Kolkata': ['2026-04-06T03:30:00.000Z'],
      'Europe/Paris': ['2026-04-06T07:00:00.000Z'],
      'America/New_York': ['2026-04-06T13:00:00.000Z'],
    });
    // A whole week, evaluated hour by hour: once per zone.
    expect(Object.values(ticks('0 9 * * 1', '2026-03-23T00:00:00Z', 7 * 24, ZONES, 60 * MINUTE)).map((fired) => fired.length)).toEqual([1, 1, 1, 1]);
  });

  it('fires in a long window (a late tick) once per zone, and never in an empty one', () => {
    const from = new Date('2026-03-02T00:00:00Z');
    expect(zonesFiring('0 9 * * 1', from, new Date('2026-03-02T23:59:00Z'), ZONES).sort()).toEqual(['America/New_York', 'Asia/Kolkata', 'Europe/Paris']);
    expect(zonesFiring('0 9 * * 1', from, from, ZONES)).toEqual([]);
  });
});

describe('isValidCron', () => {
  it('takes 5-field expressions and refuses the rest', () => {
    for (const good of ['0 9 * * 1', '*/15 * * * *', '30 2 1,15 * *', '0 9 * * MON-FRI', '0 0 1 1 *']) expect(isValidCron(good), good).toBe(true);
    for (const bad of ['every monday', '', '0 9 * *', '0 0 9 * * 1', '61 * * * *', '0 25 * * *', '0 9 * * 8', '0 9 32 * *', '@hourly x']) {
      expect(isValidCron(bad), bad).toBe(false);
    }
  });
});
