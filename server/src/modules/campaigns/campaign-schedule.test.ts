// sendAt resolution: offsets, wall-clock times in a zone, and the DST rules (gap moves forward, overlap takes the earlier offset).
import { describe, expect, it } from 'vitest';
import { localIso, resolveSendAt } from './campaign-schedule.js';

const utc = (sendAt: string, zone: string) => resolveSendAt(sendAt, zone).toISOString();

describe('resolveSendAt', () => {
  it('an explicit offset or Z is the instant, whatever the zone', () => {
    expect(utc('2026-06-01T09:00:00Z', 'Asia/Tokyo')).toBe('2026-06-01T09:00:00.000Z');
    expect(utc('2026-06-01T09:00:00+02:00', 'America/New_York')).toBe('2026-06-01T07:00:00.000Z');
    expect(utc('2026-06-01T09:00:00.250-05:30', 'UTC')).toBe('2026-06-01T14:30:00.250Z');
  });

  it('a wall-clock time is read in the zone, with or without seconds', () => {
    expect(utc('2026-06-01T09:00', 'Europe/Paris')).toBe('2026-06-01T07:00:00.000Z');
    expect(utc('2026-01-01T09:00:30', 'Europe/Paris')).toBe('2026-01-01T08:00:30.000Z');
    expect(utc('2026-06-01T09:00', 'Asia/Kolkata')).toBe('2026-06-01T03:30:00.000Z');
    expect(utc('2026-06-01T09:00', 'Asia/Kathmandu')).toBe('2026-06-01T03:15:00.000Z');
    expect(utc('2026-06-01T09:00', 'UTC')).toBe('2026-06-01T09:00:00.000Z');
  });

  it('a time skipped by spring forward moves forward by the gap', () => {
    expect(utc('2026-03-29T02:30', 'Europe/Paris')).toBe('2026-03-29T01:30:00.000Z'); // 03:30 CEST
    expect(utc('2026-03-29T02:00', 'Europe/Paris')).toBe('2026-03-29T01:00:00.000Z'); // 03:00 CEST
    expect(utc('2026-03-08T02:30', 'America/New_York')).toBe('2026-03-08T07:30:00.000Z'); // 03:30 EDT
    expect(utc('2026-10-04T02:15', 'Australia/Lord_Howe')).toBe('2026-10-03T15:45:00.000Z'); // a 30-minute gap: 02:45
    // Just around the gap, times exist and are kept.
    expect(utc('2026-03-29T01:59', 'Europe/Paris')).toBe('2026-03-29T00:59:00.000Z');
    expect(utc('2026-03-29T03:00', 'Europe/Paris')).toBe('2026-03-29T01:00:00.000Z');
  });

  it('a time repeated by fall back takes the earlier offset (its first occurrence)', () => {
    expect(utc('2026-10-25T02:30', 'Europe/Paris')).toBe('2026-10-25T00:30:00.000Z'); // 02:30 CEST, not CET
    expect(utc('2026-11-01T01:30', 'America/New_York')).toBe('2026-11-01T05:30:00.000Z'); // 01:30 EDT, not EST
    expect(utc('2026-04-05T02:30', 'Australia/Sydney')).toBe('2026-04-04T15:30:00.000Z'); // 02:30 AEDT
    expect(utc('2026-10-25T03:00', 'Europe/Paris')).toBe('2026-10-25T02:00:00.000Z'); // after the overlap: CET
  });
});

describe('localIso', () => {
  it('writes the instant with the zone offset in effect then', () => {
    expect(localIso(new Date('2026-03-29T01:30:00Z'), 'Europe/Paris')).toBe('2026-03-29T03:30:00.000+02:00');
    expect(localIso(new Date('2026-01-01T00:00:00Z'), 'Europe/Paris')).toBe('2026-01-01T01:00:00.000+01:00');
    expect(localIso(new Date('2026-01-01T00:00:00Z'), 'UTC')).toBe('2026-01-01T00:00:00.000Z');
  });
});
