// What a subscriber's user agent says about the device, mapped onto the spec's enums (bowser, MIT).
import Bowser from 'bowser';
import type { SUBSCRIBER_BROWSERS, SUBSCRIBER_OSES, SUBSCRIBER_PLATFORMS } from '../../db/schema.js';
import { boundedMemo } from '../../shared/bounded-memo.js';

export interface DeviceInfo {
  platform: (typeof SUBSCRIBER_PLATFORMS)[number] | null;
  browser: (typeof SUBSCRIBER_BROWSERS)[number] | null;
  os: (typeof SUBSCRIBER_OSES)[number] | null;
  device: string | null;
}

const PLATFORMS: Record<string, DeviceInfo['platform']> = { desktop: 'desktop', mobile: 'mobile', tablet: 'tablet' };
const BROWSERS: Record<string, DeviceInfo['browser']> = {
  Chrome: 'Chrome',
  Safari: 'Safari',
  Firefox: 'Firefox',
  'Microsoft Edge': 'Edge',
};
const OSES: Record<string, DeviceInfo['os']> = { macOS: 'macOS', Windows: 'Windows', iOS: 'iOS', iPadOS: 'iOS', Android: 'Android' };

const UNKNOWN_DEVICE: DeviceInfo = Object.freeze({ platform: null, browser: null, os: null, device: null });

// Bowser costs ~30 µs a parse; registrations repeat a few hundred distinct user agents.
const parseCached = boundedMemo(
  (userAgent): DeviceInfo => {
    const parsed = Bowser.parse(userAgent);
    const device = [parsed.platform.vendor, parsed.platform.model].filter((part) => part && part.trim() !== '').join(' ');
    return Object.freeze({
      platform: PLATFORMS[parsed.platform.type ?? ''] ?? null,
      browser: BROWSERS[parsed.browser.name ?? ''] ?? null,
      os: OSES[parsed.os.name ?? ''] ?? null,
      device: device === '' ? null : device.slice(0, 200),
    });
  },
  1000,
);

/** platform/browser/os are the spec's enum values or null for anything else; device is vendor and model when known. */
export function parseUserAgent(userAgent: string | undefined | null): DeviceInfo {
  return userAgent ? parseCached(userAgent) : UNKNOWN_DEVICE;
}

/** The preferred language of an Accept-Language header as a canonical BCP 47 tag, or null. */
export function languageFromHeader(header: string | undefined): string | null {
  return header ? languageOfHeader(header) : null;
}

const languageOfHeader = boundedMemo((header) => {
  const ranked = header
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter((entry) => entry.tag !== '' && entry.tag !== '*' && entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { tag } of ranked) {
    const canonical = canonicalize(tag);
    if (canonical) return canonical;
  }
  return null;
}, 1000);

function canonicalize(tag: string): string | null {
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}

/** A canonical BCP 47 tag (`en-us` → `en-US`), or null when the tag is not well-formed. */
export const canonicalLanguage = boundedMemo(canonicalize, 1000);
