// The delivery policy's decisions: quiet hours across time zones, midnight wraps and DST changes; the frequency cap.
import { describe, expect, it } from 'vitest';
import { capWindowStart, checkDeliveryPolicy, localZone, quietHoursEnd } from './delivery-policy.js';

const at = (iso: string) => new Date(iso);
const iso = (date: Date | undefined) => date?.toISOString();

describe('localZone', () => {
  it('takes the subscriber zone, else the project zone, else UTC', () => {
    expect(localZone('Asia/Kolkata', 'Europe/Paris')).toBe('Asia/Kolkata');
    expect(localZone(null, 'Europe/Paris')).toBe('Europe/Paris');
    expect(localZone(undefined, undefined)).toBe('UTC');
  });

  it('skips a zone the runtime does not know', () => {
    expect(localZone('Mars/Olympus_Mons', 'Europe/Paris')).toBe('Europe/Paris');
    expect(localZone('Mars/Olympus_Mons', 'Nowhere/Else')).toBe('UTC');
  });
});

describe('quietHoursEnd', () => {
  const night = { start: '22:00', end: '07:00' };

  it('a window inside one day: start inclusive, end exclusive', () => {
    const lunch = { start: '12:00', end: '13:30' };
    expect(quietHoursEnd(lunch, 'UTC', at('2024-06-01T11:59:59Z'))).toBeUndefined();
    expect(iso(quietHoursEnd(lunch, 'UTC', at('2024-06-01T12:00:00Z')))).toBe('2024-06-01T13:30:00.000Z');
    expect(iso(quietHoursEnd(lunch, 'UTC', at('2024-06-01T13:29:59Z')))).toBe('2024-06-01T13:30:00.000Z');
    expect(quietHoursEnd(lunch, 'UTC', at('2024-06-01T13:30:00Z'))).toBeUndefined();
  });

  it('a window wrapping midnight ends on the next local morning, or this one after midnight', () => {
    expect(quietHoursEnd(night, 'UTC', at('2024-06-01T21:59:00Z'))).toBeUndefined();
    expect(iso(quietHoursEnd(night, 'UTC', at('2024-06-01T22:00:00Z')))).toBe('2024-06-02T07:00:00.000Z');
    expect(iso(quietHoursEnd(night, 'UTC', at('2024-06-02T03:00:00Z')))).toBe('2024-06-02T07:00:00.000Z');
    expect(quietHoursEnd(night, 'UTC', at('2024-06-02T07:00:00Z'))).toBeUndefined();
  });

  it('reads the clock in the subscriber zone: the same instant is quiet in Paris and not in New York', () => {
    const instant = at('2024-06-01T21:00:00Z'); // 23:00 in Paris (CEST), 17:00 in New York (EDT)
    expect(iso(quietHoursEnd(night, 'Europe/Paris', instant))).toBe('2024-06-02T05:00:00.000Z');
    expect(quietHoursEnd(night, 'America/New_York', instant)).toBeUndefined();
  });

  it('half-hour offsets (Asia/Kolkata, UTC+05:30)', () => {
    expect(iso(quietHoursEnd(night, 'Asia/Kolkata', at('2024-06-01T01:29:00Z')))).toBe('2024-06-01T01:30:00.000Z'); // 06:59 IST
    expect(quietHoursEnd(night, 'Asia/Kolkata', at('2024-06-01T01:30:00Z'))).toBeUndefined(); // 07:00 IST
    expect(iso(quietHoursEnd(night, 'Asia/Kolkata', at('2024-06-01T16:30:00Z')))).toBe('2024-06-02T01:30:00.000Z'); // 22:00 IST
    expect(quietHoursEnd(night, 'Asia/Kolkata', at('2024-06-01T16:29:00Z'))).toBeUndefined(); // 21:59 IST
  });

  it('America/New_York on the spring-forward night: the end is 07:00 EDT although the night began in EST', () => {
    // 2024-03-10 02:00 EST → 03:00 EDT. At 23:00 EST on the 9th the quiet hours end at 07:00 EDT = 11:00Z (8 hours later, not 9).
    expect(iso(quietHoursEnd(night, 'America/New_York', at('2024-03-10T04:00:00Z')))).toBe('2024-03-10T11:00:00.000Z');
    expect(iso(quietHoursEnd(night, 'America/New_York', at('2024-03-10T10:59:00Z')))).toBe('2024-03-10T11:00:00.000Z'); // 06:59 EDT
    // 11:30Z is 07:30 EDT: not quiet (a fixed -05:00 offset would say 06:30, still quiet).
    expect(quietHoursEnd(night, 'America/New_York', at('2024-03-10T11:30:00Z'))).toBeUndefined();
  });

  it('an end inside the spring-forward gap moves forward with the clocks', () => {
    // 02:30 does not exist in New York on 2024-03-10: the window ends at 03:30 EDT.
    const early = { start: '23:00', end: '02:30' };
    expect(iso(quietHoursEnd(early, 'America/New_York', at('2024-03-10T06:30:00Z')))).toBe('2024-03-10T07:30:00.000Z'); // 01:30 EST
    expect(quietHoursEnd(early, 'America/New_York', at('2024-03-10T07:00:00Z'))).toBeUndefined(); // 03:00 EDT
  });

  it('America/New_York on the fall-back night: an ambiguous end is its later occurrence', () => {
    // 2024-11-03 02:00 EDT → 01:00 EST: 01:30 happens twice; the window ends at 01:30 EST = 06:30Z.
    const early = { start: '23:00', end: '01:30' };
    expect(iso(quietHoursEnd(early, 'America/New_York', at('2024-11-03T04:00:00Z')))).toBe('2024-11-03T06:30:00.000Z'); // 00:00 EDT
  });

  it('Pacific/Auckland: a window wrapping midnight across the end of daylight saving', () => {
    // 2024-04-07 03:00 NZDT (+13) → 02:00 NZST (+12). 22:00 NZDT on the 6th → 08:00 NZST on the 7th = 20:00Z.
    const nz = { start: '21:00', end: '08:00' };
    expect(iso(quietHoursEnd(nz, 'Pacific/Auckland', at('2024-04-06T09:00:00Z')))).toBe('2024-04-06T20:00:00.000Z');
    expect(quietHoursEnd(nz, 'Pacific/Auckland', at('2024-04-06T07:59:00Z'))).toBeUndefined(); // 20:59 NZDT
    expect(quietHoursEnd(nz, 'Pacific/Auckland', at('2024-04-06T20:00:00Z'))).toBeUndefined(); // 08:00 NZST
  });

  it('start equal to end is an empty window', () => {
    expect(quietHoursEnd({ start: '07:00', end: '07:00' }, 'UTC', at('2024-06-01T07:00:00Z'))).toBeUndefined();
  });
});

describe('checkDeliveryPolicy', () => {
  const subject = { zone: 'UTC', recentSends: 0 };
  const noon = at('2024-06-01T12:00:00Z');

  it('allows everything without a policy or with empty rules', () => {
    expect(checkDeliveryPolicy(undefined, { zone: 'UTC', recentSends: 1000 }, noon)).toEqual({ allowed: true });
    expect(checkDeliveryPolicy({ frequencyCap: null, quietHours: null }, { zone: 'UTC', recentSends: 1000 }, noon)).toEqual({ allowed: true });
  });

  it('caps at max pushes per window: the max-th push is the last one allowed', () => {
    const policy = { frequencyCap: { max: 3, windowSeconds: 3600 } };
    expect(checkDeliveryPolicy(policy, { ...subject, recentSends: 2 }, noon)).toEqual({ allowed: true });
    expect(checkDeliveryPolicy(policy, { ...subject, recentSends: 3 }, noon)).toEqual({ allowed: false, reason: 'frequency_capped' });
  });

  it('reports quiet hours with their end, before the cap', () => {
    const policy = { frequencyCap: { max: 1, windowSeconds: 60 }, quietHours: { start: '11:00', end: '13:00' } };
    expect(checkDeliveryPolicy(policy, { ...subject, recentSends: 5 }, noon)).toEqual({
      allowed: false,
      reason: 'quiet_hours',
      until: at('2024-06-01T13:00:00Z'),
    });
  });

  it('capWindowStart: now minus the window, undefined without a cap', () => {
    expect(iso(capWindowStart({ frequencyCap: { max: 1, windowSeconds: 90 } }, noon))).toBe('2024-06-01T11:58:30.000Z');
    expect(capWindowStart({ frequencyCap: null }, noon)).toBeUndefined();
    expect(capWindowStart(undefined, noon)).toBeUndefined();
  });
});
