// UTM parameters appended to a campaign's links, leaving everything else in each URL exactly as it was written.
import type { CampaignContent, CampaignUtm } from '../../db/schema.js';
import { rewriteLinks } from '../../delivery/index.js';

const UTM_KEYS = { source: 'utm_source', medium: 'utm_medium', campaign: 'utm_campaign', content: 'utm_content' } as const;

/**
 * Adds `utm_source`, `utm_medium`, `utm_campaign` and `utm_content` (those given) to the query of `url`. The campaign's values
 * replace a parameter of the same name already in the URL; every other parameter keeps its place and its exact
 * encoding, and the fragment stays last (`#…` is not part of the query, even when it holds a `?`). Values are
 * percent-encoded (a space is %20).
 */
export function withUtm(url: string, utm: CampaignUtm): string {
  const added = Object.entries(UTM_KEYS).flatMap(([field, key]) => {
    const value = utm[field as keyof CampaignUtm];
    return value === undefined ? [] : [`${key}=${encodeURIComponent(value)}`];
  });
  if (added.length === 0) return url;
  const hashAt = url.indexOf('#');
  const fragment = hashAt === -1 ? '' : url.slice(hashAt);
  const beforeFragment = hashAt === -1 ? url : url.slice(0, hashAt);
  const queryAt = beforeFragment.indexOf('?');
  const written = queryAt === -1 ? beforeFragment : beforeFragment.slice(0, queryAt);
  // A bare origin gets its root path, as a browser would show it: https://a.example?x → https://a.example/?x.
  const base = /^[a-z][a-z0-9+.-]*:\/\/[^/]*$/i.test(written) ? `${written}/` : written;
  const replaced = new Set(added.map((pair) => pair.slice(0, pair.indexOf('='))));
  const kept = (queryAt === -1 ? '' : beforeFragment.slice(queryAt + 1))
    .split('&')
    .filter((pair) => pair !== '' && !replaced.has(decodeName(pair.split('=', 1)[0]!)));
  return `${base}?${[...kept, ...added].join('&')}${fragment}`;
}

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

/** The content with UTM parameters on its click URL and on every action (each action is the URL its button opens). */
export function applyUtm(content: CampaignContent, utm: CampaignUtm | null | undefined): CampaignContent {
  if (!utm) return content;
  return {
    ...content,
    ...(content.clickUrl !== undefined && { clickUrl: withUtm(content.clickUrl, utm) }),
    ...(content.actions !== undefined && {
      actions: content.actions.map((action) => ({ ...action, action: withUtm(action.action, utm) })),
    }),
  };
}

/**
 * An email body with UTM parameters on every absolute http(s) link: `mailto:`, `tel:`, anchors and relative links are
 * left alone (the unsubscribe footer is added after, when each recipient's email is rendered).
 */
export function applyUtmToHtml(html: string, utm: CampaignUtm | null | undefined): string {
  if (!utm) return html;
  return rewriteLinks(html, (target) => (/^https?:\/\//i.test(target) ? withUtm(target, utm) : undefined));
}
