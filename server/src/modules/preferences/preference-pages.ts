// The preference center's HTML: server-rendered, plain forms, no script, one stylesheet its CSP names by hash.
import { createHash } from 'node:crypto';
import type { EmailState, OtherChannel, PreferenceView } from './preference.service.js';
import type { PreferenceStrings } from './preference-strings.js';

const STYLE =
  'body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#111827;line-height:1.5}' +
  'h1{font-size:1.5rem;margin:0 0 .5rem}h2{font-size:1.125rem;margin:2rem 0 .5rem}p{margin:.5rem 0}.muted{color:#4b5563}' +
  'form{margin:.75rem 0 0}button{font:inherit;padding:.5rem 1rem;border:1px solid #374151;border-radius:.375rem;background:#fff;color:#111827;cursor:pointer}' +
  'button.primary{background:#111827;border-color:#111827;color:#fff}button:focus-visible,a:focus-visible{outline:3px solid #2563eb;outline-offset:2px}' +
  'ul{list-style:none;padding:0;margin:0}li{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem 1rem;padding:.75rem 0;border-top:1px solid #e5e7eb}' +
  'li form{margin:0}a{color:#1d4ed8}';

/**
 * No script at all, no image, no frame; the one stylesheet by its hash; forms posted to Herald's public origin only.
 * The page holds the link's token and a CSRF token: never framed, never cached, never indexed.
 */
export function pageHeaders(publicUrl: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': [
      "default-src 'none'",
      `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
      `form-action ${new URL(publicUrl).origin}`,
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    // Same-origin, so the browser sends the Origin the form handler checks (no-referrer would make it "null").
    'referrer-policy': 'same-origin',
    'x-robots-tag': 'noindex',
  };
}

const escapeHtml = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

function htmlDocument(strings: PreferenceStrings, title: string, body: string): string {
  return (
    `<!doctype html><html lang="${escapeHtml(strings.lang)}"><head><meta charset="utf-8">` +
    '<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">' +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`
  );
}

const preferencesUrl = (publicUrl: string, token: string) => `${publicUrl}/u/${token}`;

/** One choice: a form posting the channel, what it turns to, and the page's CSRF token. */
function choiceForm(publicUrl: string, view: PreferenceView, channel: string, enabled: boolean, label: string, primary = false): string {
  return (
    `<form method="post" action="${escapeHtml(`${preferencesUrl(publicUrl, view.token)}/preferences`)}">` +
    `<input type="hidden" name="csrf" value="${escapeHtml(view.formToken)}">` +
    `<input type="hidden" name="channel" value="${channel}"><input type="hidden" name="enabled" value="${enabled}">` +
    `<button type="submit"${primary ? ' class="primary"' : ''}>${escapeHtml(label)}</button></form>`
  );
}

function emailSection(publicUrl: string, view: PreferenceView, strings: PreferenceStrings): string {
  const sections: Record<EmailState, string> = {
    subscribed: `<p>${escapeHtml(strings.emailSubscribed)}</p>${choiceForm(publicUrl, view, 'email', false, strings.unsubscribeAll, true)}`,
    unsubscribed: `<p>${escapeHtml(strings.emailUnsubscribed)}</p>${choiceForm(publicUrl, view, 'email', true, strings.resubscribe)}`,
    stopped: `<p>${escapeHtml(strings.emailStopped)}</p>`,
  };
  return `<section><h2>${escapeHtml(strings.channelNames.email)}</h2>${sections[view.email]}</section>`;
}

function channelItem(publicUrl: string, view: PreferenceView, strings: PreferenceStrings, channel: OtherChannel, enabled: boolean): string {
  const name = strings.channelNames[channel];
  return (
    `<li><span>${escapeHtml(name)}: <strong>${escapeHtml(enabled ? strings.on : strings.off)}</strong></span>` +
    `${choiceForm(publicUrl, view, channel, !enabled, enabled ? strings.turnOff : strings.turnOn)}</li>`
  );
}

/** The preference center of one link: the address masked, email's state and its one choice, the other channels'. */
export function preferencePage(publicUrl: string, view: PreferenceView, strings: PreferenceStrings): string {
  const others =
    view.channels.length === 0
      ? ''
      : `<section><h2>${escapeHtml(strings.otherChannels)}</h2><ul>` +
        view.channels.map(({ channel, enabled }) => channelItem(publicUrl, view, strings, channel, enabled)).join('') +
        '</ul></section>';
  return htmlDocument(
    strings,
    strings.title,
    `<h1>${escapeHtml(strings.title)}</h1><p class="muted">${escapeHtml(strings.intro(view.maskedAddress, view.sender))}</p>` +
      emailSection(publicUrl, view, strings) +
      others,
  );
}

/** A short page saying what happened (a confirmation, a refusal), with a way back to the preferences when there is a link. */
export function noticePage(strings: PreferenceStrings, title: string, message: string, back?: { publicUrl: string; token: string }): string {
  const link = back ? `<p><a href="${escapeHtml(preferencesUrl(back.publicUrl, back.token))}">${escapeHtml(strings.backToPreferences)}</a></p>` : '';
  return htmlDocument(strings, title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${link}`);
}
