// Geo at registration: trusted edge headers and a MaxMind-format database (written by the test), through HTTP.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.js';
import { CHROME_UA, createTenant, pushSubscription, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { writeMmdb } from '../../../test/mmdb-writer.js';
import { createGeoLookup, MmdbGeoReader, normalizeCity, normalizeCountry } from './geo.js';


let dir: string;
let dbPath: string;
let geoApp: TestApp;
let plainApp: TestApp;
let geoTenant: Tenant;
let plainTenant: Tenant;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'herald-geo-'));
  dbPath = path.join(dir, 'test-city.mmdb');
  await writeFile(
    dbPath,
    writeMmdb({
      '81.2.69.0/24': {
        country: { iso_code: 'GB', names: { en: 'United Kingdom' } },
        city: { names: { en: 'London' } },
        location: { time_zone: 'Europe/London' },
      },
      '203.0.113.0/24': { country: { iso_code: 'jp' } },
      '198.51.100.0/24': { registered_country: { iso_code: 'US' }, location: { time_zone: 'Not/AZone' } },
    }),
  );
  geoApp = await startTestApp({
    GEOIP_DB: dbPath,
    GEO_COUNTRY_HEADER: 'CF-IPCountry, x-vercel-ip-country',
    GEO_CITY_HEADER: 'x-vercel-ip-city',
    GEO_TIMEZONE_HEADER: 'x-vercel-ip-timezone',
  });
  plainApp = await startTestApp();
  [geoTenant, plainTenant] = await Promise.all([createTenant(geoApp), createTenant(plainApp)]);
});
afterAll(async () => {
  await Promise.all([geoApp?.close(), plainApp?.close()]);
  await rm(dir, { recursive: true, force: true });
});

function registration(projectId: string, extra: Record<string, unknown> = {}) {
  return { projectId, ...pushSubscription(), userAgent: CHROME_UA, ...extra };
}

async function registerGeo(
  t: TestApp,
  tenant: Tenant,
  options: { headers?: Record<string, string>; ip?: string; body?: Record<string, unknown> } = {},
) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/subscribers',
    headers: { ...tenant.live, ...options.headers },
    remoteAddress: options.ip ?? '127.0.0.1',
    payload: registration(tenant.projectId, options.body),
  });
  expect(res.statusCode, res.body).toBe(201);
  const got = await t.app.inject({ method: 'GET', url: `/subscribers/${res.json().id}`, headers: tenant.live });
  const { country, city, timezone } = got.json<{ country: string | null; city: string | null; timezone: string | null }>();
  return { country, city, timezone };
}

describe('geo from trusted headers', () => {
  it('fills country (upper case), city (URI-decoded) and timezone from the configured headers', async () => {
    const geo = await registerGeo(geoApp, geoTenant, {
      headers: { 'x-vercel-ip-country': 'de', 'x-vercel-ip-city': 'M%C3%BCnchen', 'x-vercel-ip-timezone': 'Europe/Berlin' },
    });
    expect(geo).toEqual({ country: 'DE', city: 'München', timezone: 'Europe/Berlin' });
  });

  it('takes the first configured header that is present', async () => {
    const geo = await registerGeo(geoApp, geoTenant, { headers: { 'cf-ipcountry': 'FR', 'x-vercel-ip-country': 'DE' } });
    expect(geo.country).toBe('FR');
  });

  it('keeps the timezone from the body over geo', async () => {
    const geo = await registerGeo(geoApp, geoTenant, {
      headers: { 'cf-ipcountry': 'DE', 'x-vercel-ip-timezone': 'Europe/Berlin' },
      body: { timezone: 'America/New_York' },
    });
    expect(geo).toMatchObject({ country: 'DE', timezone: 'America/New_York' });
  });

  it('ignores unknown (XX), Tor (T1) and malformed values', async () => {
    expect((await registerGeo(geoApp, geoTenant, { headers: { 'cf-ipcountry': 'XX' } })).country).toBeNull();
    expect((await registerGeo(geoApp, geoTenant, { headers: { 'cf-ipcountry': 'T1' } })).country).toBeNull();
    const bad = await registerGeo(geoApp, geoTenant, { headers: { 'cf-ipcountry': 'Germany', 'x-vercel-ip-timezone': 'Mars/Olympus' } });
    expect(bad).toEqual({ country: null, city: null, timezone: null });
  });

  it('reads no header unless configured (headers are only trustworthy behind a proxy that sets them)', async () => {
    const geo = await registerGeo(plainApp, plainTenant, {
      headers: { 'cf-ipcountry': 'DE', 'x-vercel-ip-city': 'Berlin', 'x-vercel-ip-timezone': 'Europe/Berlin' },
      ip: '81.2.69.160',
    });
    expect(geo).toEqual({ country: null, city: null, timezone: null });
  });
});

describe('geo from GEOIP_DB', () => {
  it('fills country, city and timezone from the client address', async () => {
    expect(await registerGeo(geoApp, geoTenant, { ip: '81.2.69.160' })).toEqual({
      country: 'GB',
      city: 'London',
      timezone: 'Europe/London',
    });
  });

  it('normalises the country, falls back to the registered country and drops an unknown zone', async () => {
    expect(await registerGeo(geoApp, geoTenant, { ip: '203.0.113.9' })).toEqual({ country: 'JP', city: null, timezone: null });
    expect(await registerGeo(geoApp, geoTenant, { ip: '198.51.100.1' })).toEqual({ country: 'US', city: null, timezone: null });
  });

  it('leaves every field null for an address the database does not know', async () => {
    expect(await registerGeo(geoApp, geoTenant, { ip: '192.0.2.1' })).toEqual({ country: null, city: null, timezone: null });
  });

  it('prefers the edge headers, and does not mix a database city with another country', async () => {
    expect(await registerGeo(geoApp, geoTenant, { ip: '81.2.69.160', headers: { 'cf-ipcountry': 'IE' } })).toEqual({
      country: 'IE',
      city: null,
      timezone: null,
    });
    expect(await registerGeo(geoApp, geoTenant, { ip: '81.2.69.160', headers: { 'cf-ipcountry': 'GB' } })).toEqual({
      country: 'GB',
      city: 'London',
      timezone: 'Europe/London',
    });
  });
});

describe('geo lookup and configuration', () => {
  it('reads an address directly and answers unknown for a non-address', () => {
    const reader = new MmdbGeoReader(dbPath);
    expect(reader.locate('81.2.69.1').country).toBe('GB');
    expect(reader.locate('not-an-ip')).toEqual({ country: null, city: null, timezone: null });
  });

  it('fails at start, naming GEOIP_DB, when the file is missing or not a database', async () => {
    expect(() => createGeoLookup({ dbPath: path.join(dir, 'missing.mmdb') })).toThrow(/GEOIP_DB: cannot read/);
    const junk = path.join(dir, 'junk.mmdb');
    await writeFile(junk, 'not a database');
    expect(() => createGeoLookup({ dbPath: junk })).toThrow(/GEOIP_DB: .* is not a MaxMind-format database/);
  });

  it('is off by default and parses header lists', () => {
    expect(loadConfig({}).geo).toEqual({ dbPath: undefined, countryHeaders: [], cityHeaders: [], timezoneHeaders: [] });
    expect(loadConfig({ GEO_COUNTRY_HEADER: 'CF-IPCountry, x-vercel-ip-country' }).geo.countryHeaders).toEqual([
      'cf-ipcountry',
      'x-vercel-ip-country',
    ]);
    expect(() => loadConfig({ GEO_CITY_HEADER: 'x city' })).toThrow(ConfigError);
  });

  it('normalises values', () => {
    expect(normalizeCountry(' gb ')).toBe('GB');
    expect(normalizeCountry('GBR')).toBeNull();
    expect(normalizeCity('S%C3%A3o%20Paulo')).toBe('São Paulo');
    expect(normalizeCity('100%')).toBe('100%');
  });
});
