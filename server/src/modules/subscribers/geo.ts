// Geo at registration: country, city and time zone from trusted edge headers (when configured) or a
// MaxMind-format database (GEOIP_DB). Built once at start; a lookup never touches the network or the disk.
import { readFileSync } from 'node:fs';
import { Reader, type CityResponse } from 'maxmind';

export interface GeoLocation {
  /** ISO 3166-1 alpha-2, upper case. */
  country: string | null;
  city: string | null;
  /** IANA time zone. */
  timezone: string | null;
}

export interface GeoRequest {
  /** The client address (X-Forwarded-For only when TRUST_PROXY is on). */
  ip?: string | undefined;
  headers?: Record<string, string | string[] | undefined> | undefined;
}

export interface GeoLookup {
  locate(request: GeoRequest): GeoLocation;
}

export interface GeoConfig {
  /** Path to a MaxMind-format .mmdb (GeoLite2/GeoIP2 City or Country, DB-IP, IPinfo…). */
  dbPath?: string | undefined;
  /** Trusted headers, first present wins; empty = not read (headers are only trustworthy behind a proxy that sets them). */
  countryHeaders?: readonly string[] | undefined;
  cityHeaders?: readonly string[] | undefined;
  timezoneHeaders?: readonly string[] | undefined;
}

const UNKNOWN = Object.freeze({ country: null, city: null, timezone: null }) as GeoLocation;

/** Cloudflare sends XX for unknown and T1 for Tor; neither is a country. */
export function normalizeCountry(value: string | null | undefined): string | null {
  const code = value?.trim().toUpperCase();
  if (!code || !/^[A-Z]{2}$/.test(code) || code === 'XX' || code === 'T1') return null;
  return code;
}

export function normalizeCity(value: string | null | undefined): string | null {
  if (!value) return null;
  let city = value;
  // Vercel URI-encodes x-vercel-ip-city; a literal % that is not an escape is kept as is.
  try {
    city = decodeURIComponent(value);
  } catch {
    /* not encoded */
  }
  city = city.replace(/[\p{Cc}]/gu, '').trim();
  return city.length > 0 && city.length <= 120 ? city : null;
}

function normalizeTimezone(value: string | null | undefined): string | null {
  const zone = value?.trim();
  if (!zone || zone.length > 64) return null;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone;
  } catch {
    return null;
  }
}

function header(headers: GeoRequest['headers'], names: readonly string[] | undefined): string | undefined {
  if (!headers || !names) return undefined;
  for (const name of names) {
    const raw = headers[name];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value !== undefined && value.trim() !== '') return value;
  }
  return undefined;
}

type GeoRecord = Partial<Pick<CityResponse, 'country' | 'registered_country' | 'city' | 'location'>>;

/** Reads a MaxMind-format database; the whole file is loaded once (a restart picks up a new file). */
export class MmdbGeoReader {
  private readonly reader: Reader<GeoRecord>;

  constructor(path: string) {
    let buffer: Buffer;
    try {
      buffer = readFileSync(path);
    } catch (error) {
      throw new Error(`GEOIP_DB: cannot read ${path}: ${(error as Error).message}`);
    }
    try {
      this.reader = new Reader<GeoRecord>(buffer);
    } catch (error) {
      throw new Error(`GEOIP_DB: ${path} is not a MaxMind-format database: ${(error as Error).message}`);
    }
  }

  locate(ip: string): GeoLocation {
    let record: GeoRecord | null;
    try {
      record = this.reader.get(ip);
    } catch {
      return UNKNOWN; // not an IP address
    }
    if (!record) return UNKNOWN;
    return {
      country: normalizeCountry(record.country?.iso_code ?? record.registered_country?.iso_code),
      city: normalizeCity(record.city?.names?.en),
      timezone: normalizeTimezone(record.location?.time_zone),
    };
  }
}

/** Headers first (the operator vouched for the proxy that sets them), then the database, field by field. */
export function createGeoLookup(config: GeoConfig): GeoLookup {
  const db = config.dbPath ? new MmdbGeoReader(config.dbPath) : undefined;
  const anyHeader = Boolean(config.countryHeaders?.length || config.cityHeaders?.length || config.timezoneHeaders?.length);
  if (!db && !anyHeader) return { locate: () => UNKNOWN };
  return {
    locate(request) {
      const fromHeaders: GeoLocation = anyHeader
        ? {
            country: normalizeCountry(header(request.headers, config.countryHeaders)),
            city: normalizeCity(header(request.headers, config.cityHeaders)),
            timezone: normalizeTimezone(header(request.headers, config.timezoneHeaders)),
          }
        : UNKNOWN;
      const complete = fromHeaders.country !== null && fromHeaders.city !== null && fromHeaders.timezone !== null;
      let fromDb = db && !complete && request.ip ? db.locate(request.ip) : UNKNOWN;
      // A city or zone from the database is not mixed with another country named by the edge.
      if (fromHeaders.country !== null && fromDb.country !== fromHeaders.country) fromDb = UNKNOWN;
      return {
        country: fromHeaders.country ?? fromDb.country,
        city: fromHeaders.city ?? fromDb.city,
        timezone: fromHeaders.timezone ?? fromDb.timezone,
      };
    },
  };
}
