// The plain part of an HTML email: made from the HTML, or once per template with its values put in per recipient.
import { compile, type HtmlToTextOptions } from 'html-to-text';
import { Parser } from 'htmlparser2';
import { Output, Tag } from 'liquidjs';
import { renderPiece, type MergeTemplate } from './merge-tags.js';

const TEXT_OPTIONS: HtmlToTextOptions = {
  // Not hard-wrapped: a reader's client wraps to its own width, and quoted-printable keeps lines short on the wire.
  // Wrapping would also make each line depend on the length of the values before it.
  wordwrap: false,
  formatters: {
    // An image is its alt text: a tracking pixel or a logo's address means nothing in plain text.
    altText: (element, _walk, builder) => {
      const alt = (element as { attribs?: Record<string, string> }).attribs?.alt?.trim();
      if (alt) builder.addInline(alt);
    },
  },
  selectors: [
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    { selector: 'img', format: 'altText' },
    // Email layouts are tables: each cell reads as its own block rather than running into the next.
    { selector: 'td', format: 'block' },
    { selector: 'th', format: 'block' },
  ],
};

/** The plain-text part of an HTML email: links kept readable as `text [url]`, images as their alt text. */
export const htmlToPlainText: (html: string) => string = compile(TEXT_OPTIONS);

/**
 * A template's plain part converted once, with a placeholder where each output tag was: `parts` alternate fixed
 * text and the index of the output whose value goes there (`upper`: inside a heading, which upper-cases it).
 */
export interface PlainTextPlan {
  readonly outputs: readonly Output[];
  readonly parts: readonly (string | { output: number; upper: boolean })[];
}

const MARK = 'zqxj';
const placeholder = (index: number) => `${MARK}${index}q`;
const PLACEHOLDERS = new RegExp(`${MARK}(\\d+)q`, 'gi');

/** Attributes the conversion never reads: a value in them cannot change the plain part. */
const UNREAD_ATTRIBUTES = new Set(['style', 'class', 'id', 'width', 'height', 'align', 'valign', 'bgcolor', 'border', 'cellpadding', 'cellspacing', 'color', 'role', 'lang', 'dir', 'target', 'rel', 'title']);

// An entity written before a value could run into it (`&am` + `p;`).
const OPEN_ENTITY = /&[#a-z0-9]*$/i;

/**
 * Whether each value of `html` (placeholders for the outputs) sits where its text reaches the plain part as written:
 * in text, outside any link with an address (a link whose text equals its address hides the address), and in no
 * attribute the conversion reads.
 */
function valuesOnlyInText(html: string): boolean {
  const hasMark = (text: string) => text.toLowerCase().includes(MARK);
  let safe = true;
  const links: boolean[] = [];
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (hasMark(name)) safe = false;
        for (const [attribute, value] of Object.entries(attributes)) {
          if (hasMark(attribute) || (hasMark(value) && !(UNREAD_ATTRIBUTES.has(attribute) || attribute.startsWith('data-') || attribute.startsWith('aria-')))) safe = false;
        }
        links.push(name === 'a' && Boolean(attributes.href));
      },
      onclosetag() {
        links.pop();
      },
      ontext(text) {
        if (links.includes(true) && hasMark(text)) safe = false;
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return safe;
}

function planOf(template: MergeTemplate): PlainTextPlan | undefined {
  if (template.format !== 'html') return undefined;
  const outputs: Output[] = [];
  let html = '';
  for (const piece of template.parsed) {
    if (piece instanceof Output) {
      if (OPEN_ENTITY.test(html)) return undefined;
      html += placeholder(outputs.length);
      outputs.push(piece);
    } else if (piece instanceof Tag) {
      // {% if %}, {% for %}, {% assign %} …: what is written depends on the values.
      return undefined;
    } else {
      const text = (piece as { str?: unknown }).str;
      if (typeof text !== 'string' || text.toLowerCase().includes(MARK)) return undefined;
      html += text;
    }
  }
  if (outputs.length === 0 || !valuesOnlyInText(html)) return undefined;
  const parts: PlainTextPlan['parts'][number][] = [];
  let last = 0;
  const text = htmlToPlainText(html);
  for (const match of text.matchAll(PLACEHOLDERS)) {
    const upper = match[0] === match[0].toUpperCase();
    if (!upper && match[0] !== match[0].toLowerCase()) return undefined;
    parts.push(text.slice(last, match.index), { output: Number(match[1]), upper });
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  if (parts.some((part) => typeof part === 'string' && part.toLowerCase().includes(MARK))) return undefined;
  return { outputs, parts };
}

const plans = new WeakMap<MergeTemplate, PlainTextPlan | undefined>();

/** The template's plan, made on first use; undefined when its values can change more of the plain part than their own text. */
export function plainTextPlan(template: MergeTemplate): PlainTextPlan | undefined {
  if (!plans.has(template)) plans.set(template, planOf(template));
  return plans.get(template);
}

const ESCAPED: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&#34;': '"', '&#39;': "'" };
const UNESCAPED: Record<string, string> = Object.fromEntries(Object.entries(ESCAPED).map(([escaped, raw]) => [raw, escaped]));
const unescape = (html: string) => html.replace(/&(?:amp|lt|gt|#34|#39);/g, (entity) => ESCAPED[entity]!);
const escape = (text: string) => text.replace(/[&<>"']/g, (raw) => UNESCAPED[raw]!);
// Words with single spaces between: the conversion keeps such a value as it is, wherever it stands in a text.
const PLAIN_VALUE = /^[^\s\u200b\p{Cc}]+(?: [^\s\u200b\p{Cc}]+)*$/u;

/**
 * The plain part of `html`, which `template` rendered with `variables`: from the template's plan when each value is
 * plain words (escaped as liquid escapes, no leading, trailing or repeated whitespace), else converted from `html`.
 * Both give the same text; the plan costs a few microseconds where the conversion costs a few hundred.
 */
export function plainTextOf(template: MergeTemplate, variables: Record<string, unknown>, html: string): string {
  const plan = plainTextPlan(template);
  const values = plan?.outputs.map((output) => {
    const written = renderPiece(template, output, variables);
    const value = written === undefined ? undefined : unescape(written);
    return value !== undefined && escape(value) === written && PLAIN_VALUE.test(value) ? value : undefined;
  });
  if (!plan || !values || values.includes(undefined)) return htmlToPlainText(html);
  return plan.parts.map((part) => (typeof part === 'string' ? part : part.upper ? values[part.output]!.toUpperCase() : values[part.output]!)).join('');
}
