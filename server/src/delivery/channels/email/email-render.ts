// An email rendered for one recipient: its merge tags (a personalized message's), signed click links, an open pixel,
// the unsubscribe footer and headers, VERP.
import { createHash } from 'node:crypto';
import type { EmailContent } from '../../../db/schema.js';
import { boundedMemo } from '../../../shared/bounded-memo.js';
import { MergeTagRenderError, parseTemplate, renderTemplate, type MergeTagFormat, type MergeTemplate } from '../../../shared/merge-tags.js';
import { htmlToPlainText } from '../../../shared/plain-text.js';
import type { SubscriberMergeFields } from '../../delivery.repository.js';
import type { EmailLinks, LinkSubject } from '../../email-links.js';
import { emailContentProblems } from './email-content.js';
import type { RenderedEmail } from './email-item.js';

/** Who one delivery goes to, and what its links name. */
export interface EmailRecipient {
  deliveryId: number;
  projectId: string;
  /** Campaign and automation mail is bulk mail (List-Id); transactional mail is not. */
  source: 'transactional' | 'campaign' | 'automation';
  messageId: string;
  /** Campaign mail's links name the campaign; transactional mail's, the message. */
  campaignId: string | null;
  subscriberId: string;
  address: string;
}

export interface EmailRenderContext {
  links: EmailLinks;
  /** Herald's inbound mail domain: the VERP Return-Path and the mailto unsubscribe entry. */
  bounceDomain: string;
}

const UNSUBSCRIBE_LABEL = 'Unsubscribe or change your email preferences';

// An opening <a> tag, attribute values quoted or not (a quoted '>' does not end it), and its href attribute.
const ANCHOR_TAG = /<a\b(?:[^>"']|"[^"]*"|'[^']*')*>/gi;
const HREF = /(\shref\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))/i;
const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** An attribute value as a browser reads it: character references decoded (`&amp;` in a query string is `&`). */
function decodeEntities(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (reference, name: string) => {
    if (name[0] !== '#') return NAMED_ENTITIES[name.toLowerCase()] ?? reference;
    const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
    // Surrogate halves are no characters: such a reference stays as written.
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : reference;
  });
}

const escapeHtml = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * `html` with the href of every link rewritten by `rewrite`, given the target as a browser would follow it — entities
 * decoded, surrounding whitespace trimmed — and answering the new target, or undefined to leave the link as written.
 */
export function rewriteLinks(html: string, rewrite: (target: string) => string | undefined): string {
  return html.replace(ANCHOR_TAG, (tag) =>
    tag.replace(HREF, (attribute, prefix: string, double?: string, single?: string, bare?: string) => {
      const target = rewrite(decodeEntities(double ?? single ?? bare ?? '').trim());
      return target === undefined ? attribute : `${prefix}"${escapeHtml(target)}"`;
    }),
  );
}

/**
 * Wraps every tracked link of `html` in its signed click URL. Only absolute http(s) links are tracked: `mailto:`,
 * `tel:`, `#anchors` and relative links are left alone, and so are links to the preference center (`/u/…`),
 * whose tokens are the recipient's own. The target signed is the href as the browser would follow it, query string
 * and fragment kept exactly.
 */
function wrapLinks(html: string, track: (target: string) => string, preferenceCenter: string): string {
  return rewriteLinks(html, (target) => (!/^https?:\/\//i.test(target) || target.startsWith(preferenceCenter) ? undefined : track(target)));
}

/** Inserts `markup` before the last `</body>`, or at the end of a fragment without one. */
function beforeBodyEnd(html: string, markup: string): string {
  const end = html.search(/<\/body\s*>(?![\s\S]*<\/body\s*>)/i);
  return end === -1 ? html + markup : html.slice(0, end) + markup + html.slice(end);
}

/** Inserts `markup` right after the opening `<body …>`, or at the start of a fragment without one. */
function afterBodyStart(html: string, markup: string): string {
  const start = /<body\b(?:[^>"']|"[^"]*"|'[^']*')*>/i.exec(html);
  return start ? html.slice(0, start.index + start[0].length) + markup + html.slice(start.index + start[0].length) : markup + html;
}

// The plain part of an HTML body is the same for every recipient of a message and costs milliseconds: made once.
const plainText = boundedMemo(htmlToPlainText, 64);

/**
 * What a personalized email's merge tags read for one recipient: its subscriber's attributes by their own names, and
 * `email` (the address it goes to), `external_id`, `country`, `city`, `language` and `timezone` when known (an
 * unknown one is missing, as an absent attribute is). An attribute of the same name wins: it is what the project
 * stored for its templates, and a standard name added later never changes what an existing template renders.
 */
export function recipientVariables(address: string, fields: SubscriberMergeFields | null): Record<string, unknown> {
  const standard = {
    email: address,
    external_id: fields?.externalId,
    country: fields?.country,
    city: fields?.city,
    language: fields?.language,
    timezone: fields?.timezone,
  };
  return { ...Object.fromEntries(Object.entries(standard).filter(([, value]) => value !== null && value !== undefined)), ...fields?.attributes };
}

const PARTS = [
  ['subject', 'text'],
  ['preheader', 'text'],
  ['html', 'html'],
  ['text', 'text'],
] as const satisfies readonly (readonly [keyof EmailContent, MergeTagFormat])[];

type Part = (typeof PARTS)[number][0];

// Keyed by the content object the engine keeps per message: a lookup per recipient costs nothing, where the parse
// cache's key is the whole text (hashed and compared on every lookup: ~0.5 ms for a 500 KB body).
const parsedContents = new WeakMap<EmailContent, [Part, MergeTemplate][] | undefined>();

/** Each part of `content` parsed, once per message; undefined when one does not parse. */
function parsedParts(content: EmailContent): [Part, MergeTemplate][] | undefined {
  if (parsedContents.has(content)) return parsedContents.get(content);
  const parts: [Part, MergeTemplate][] = [];
  for (const [part, format] of PARTS) {
    const source = content[part];
    if (source === undefined) continue;
    const parsed = parseTemplate(source, format);
    if (!parsed.ok) {
      parsedContents.set(content, undefined);
      return undefined;
    }
    parts.push([part, parsed.template]);
  }
  parsedContents.set(content, parts);
  return parts;
}

/** A personalized message's content for one recipient, or why it cannot be rendered for them. */
export type Personalized = { content: EmailContent } | { refusal: 'template_variables_missing' | 'template_render_failed' };

/**
 * Renders the merge tags of a personalized message's subject, preheader, HTML (values escaped) and text with one
 * recipient's variables, strictly: a variable it reads without a default and the recipient lacks is
 * `template_variables_missing`; a part that does not parse, whose render a limit (or a failing filter) stops, or
 * that renders to what cannot go as an email (a subject past 998 characters), `template_render_failed`. Without a
 * text part, the plain part is made from this recipient's HTML.
 */
export function personalizeEmail(content: EmailContent, variables: Record<string, unknown>): Personalized {
  const parts = parsedParts(content);
  if (!parts) return { refusal: 'template_render_failed' };
  const rendered: Partial<Record<Part, string>> = {};
  let missing = false;
  for (const [part, template] of parts) {
    try {
      const outcome = renderTemplate(template, variables);
      if (outcome.ok) rendered[part] = outcome.text;
      else missing = true;
    } catch (error) {
      if (error instanceof MergeTagRenderError) return { refusal: 'template_render_failed' };
      throw error;
    }
  }
  if (missing) return { refusal: 'template_variables_missing' };
  const { subject = '', preheader, html, text } = rendered;
  const personalized: EmailContent = {
    ...content,
    // A value's line breaks would start new header lines: a subject is one line whatever the values hold.
    subject: subject.replace(/\s*[\r\n]+\s*/g, ' '),
    preheader,
    html,
    // Each recipient's HTML is its own: converted here rather than through the memo shared across messages. Not from
    // the template's plan (plainTextOf), measured: a worker then makes so little garbage per email that V8 scavenges
    // rarely, and the buffers of nodemailer's streams stay allocated between scavenges — a campaign worker's peak
    // RSS rose from 220 to 320 MB (docs/PERFORMANCE.md, "Email campaign of 1,000,000").
    text: text ?? (html?.trim() ? htmlToPlainText(html) : undefined),
  };
  return emailContentProblems(personalized) ? { refusal: 'template_render_failed' } : { content: personalized };
}

/** What Gmail's feedback loop groups complaints by: the last field names the sender, the others its streams. */
const FEEDBACK_SENDER = 'herald';

/**
 * The headers that let mailbox providers tell one sender's streams apart. `Feedback-ID` (Gmail's feedback loop,
 * `a:b:c:SenderId`): `<campaign id>:<project id>:campaign:herald` for campaign mail, `<project id>:<source>:herald`
 * for automation and transactional mail — stable per stream, never a recipient's. `List-Id` (RFC 2919) on campaign
 * and automation mail only, `<<project id>.<From domain>>`: the list a subscriber is on is their project's marketing
 * mail, the same for every campaign, so a mail client's per-list filters keep working; transactional mail is on no list.
 */
function bulkMailHeaders(recipient: EmailRecipient, domain: string): Record<string, string> {
  const { source, projectId, campaignId } = recipient;
  const feedback = [...(source === 'campaign' && campaignId ? [campaignId] : []), projectId, source, FEEDBACK_SENDER].join(':');
  if (source === 'transactional') return { 'Feedback-ID': feedback };
  return { 'List-Id': `<${projectId.toLowerCase()}.${domain}>`, 'Feedback-ID': feedback };
}

/**
 * Renders `content` for one recipient (a personalized message's through personalizeEmail first, so that links are
 * wrapped and signed as the recipient reads them); the same delivery always renders the same email. Every email
 * carries: each http(s) link of its HTML wrapped in a signed click URL, an open pixel, a footer link to the
 * recipient's preference center, a plain-text part (the sender's, or made from the HTML — links shown, not wrapped,
 * so it stays readable), `List-Unsubscribe` (https and mailto) with `List-Unsubscribe-Post:
 * List-Unsubscribe=One-Click` (RFC 8058), `Feedback-ID` (bulkMailHeaders), for campaign and automation mail `List-Id`,
 * an opaque Message-ID of its delivery on the From domain, and a VERP Return-Path.
 */
export function renderEmail(content: EmailContent, recipient: EmailRecipient, context: EmailRenderContext): RenderedEmail {
  const { subject, preheader, html, text } = content;
  const { links, bounceDomain } = context;
  const linked: LinkSubject = { id: recipient.campaignId ?? recipient.messageId, subscriberId: recipient.subscriberId };
  const unsubscribeToken = links.unsubscribeToken(recipient.deliveryId);
  const unsubscribeUrl = links.unsubscribeUrl(unsubscribeToken);

  let body: string | undefined;
  if (html?.trim()) {
    body = wrapLinks(html, (target) => links.clickUrl(linked, target), links.unsubscribeUrl(''));
    if (preheader) {
      body = afterBodyStart(body, `<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">${escapeHtml(preheader)}</div>`);
    }
    body = beforeBodyEnd(
      body,
      `<p style="margin:24px 0 0;font-size:12px;color:#6b7280;text-align:center"><a href="${escapeHtml(unsubscribeUrl)}" style="color:#6b7280">${UNSUBSCRIBE_LABEL}</a></p>` +
        `<img src="${escapeHtml(links.openUrl(linked))}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0">`,
    );
  }
  const plain = text?.trim() ? text : plainText(html ?? '');

  const domain = content.from.email.slice(content.from.email.lastIndexOf('@') + 1).toLowerCase();
  // Sealed, not the message and subscriber ids: those carry their creation times and name Herald's own rows.
  const messageId = `<${links.messageIdToken(recipient.deliveryId)}@${domain}>`;
  return {
    messageId,
    from: content.from,
    replyTo: content.replyTo,
    to: recipient.address,
    subject: subject.trim(),
    html: body,
    text: `${plain.trimEnd()}\n\n--\n${UNSUBSCRIBE_LABEL}: ${unsubscribeUrl}\n`,
    headers: {
      'List-Unsubscribe': `<${unsubscribeUrl}>, <mailto:unsubscribe+${unsubscribeToken}@${bounceDomain}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      ...bulkMailHeaders(recipient, domain),
    },
    returnPath: `bounce+${links.bounceToken(recipient.deliveryId)}@${bounceDomain}`,
    baseBoundary: createHash('sha256').update(messageId).digest('hex').slice(0, 16),
  };
}
