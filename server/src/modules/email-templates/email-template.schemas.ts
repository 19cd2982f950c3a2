// Zod schemas of an email's parts with merge tags, shared by templates and email campaigns: sizes, one-line subject.
import { z } from 'zod';

const KIB = 1024;
const HTML_MAX_BYTES = 512 * KIB;
const TEXT_MAX_BYTES = 256 * KIB;

export const MERGE_TAGS_NOTE =
  'Merge tags are liquid: `{{ first_name }}`, `{{ first_name | default: "there" }}`, `{% if vip %}…{% endif %}`. In `html` ' +
  'every value is HTML-escaped (`| raw` opts out); subject, text and preheader are plain text and written as given. A ' +
  'variable the render needs and does not get is missing, unless the template gives it a default or only tests it ' +
  'in a condition. No `include`, `render` or `layout` (no files), no unknown filter, no `sample` and no `"now"` date: ' +
  "a render depends on its variables only. Each part is parsed when saved: a problem → 422 naming the part " +
  '(`subject`, `preheader`, `html`, `text`) with liquid\'s message and position. docs/CONTEXT.md, "Email templates ' +
  'and merge tags".';

const withinBytes = (limit: number) => (value: string) => Buffer.byteLength(value, 'utf8') <= limit;

export const name = z.string().trim().min(1).max(200);
export const subject = z
  .string()
  .min(1)
  .max(998)
  .refine((value) => !/[\r\n]/.test(value), 'must be one line')
  .describe('Subject line with merge tags: one line, up to 998 characters');
export const html = z
  .string()
  .min(1)
  .refine(withinBytes(HTML_MAX_BYTES), 'must be at most 512 KiB of UTF-8')
  .describe('HTML body with merge tags, up to 512 KiB of UTF-8; values are HTML-escaped');
export const text = z
  .string()
  .min(1)
  .refine(withinBytes(TEXT_MAX_BYTES), 'must be at most 256 KiB of UTF-8')
  .nullable()
  .describe('Plain-text part with merge tags, up to 256 KiB of UTF-8; null or absent: generated from the rendered HTML');
export const preheader = z
  .string()
  .min(1)
  .max(1000)
  .nullable()
  .describe('Preview text inboxes show after the subject, with merge tags, up to 1000 characters (plain text)');
