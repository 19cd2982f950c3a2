// Zod schema of an email's visual design: the dashboard editor's block document, stored beside the HTML it renders to.
import { z } from 'zod';

const DESIGN_MAX_BYTES = 256 * 1024;
const MAX_BLOCKS = 100;
const MAX_COLUMN_BLOCKS = 20;

const id = z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'must be 1 to 40 letters, digits, - or _').describe("The block's id, unique in the design");
const color = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour like #1a2b3c');
const align = z.enum(['left', 'center', 'right']);
// A link may carry merge tags (`https://example.com/?u={{ external_id }}`), so only its start is checked.
const link = z
  .string()
  .max(2000)
  .regex(/^(https?:\/\/|mailto:|tel:|\{\{)/, 'must start with https://, http://, mailto:, tel: or a merge tag');
const optionalLink = z.union([z.literal(''), link]);
const words = (max: number) => z.string().max(max);

const text = z.strictObject({
  type: z.literal('text'),
  id,
  style: z.enum(['heading', 'paragraph']).describe('heading: a large bold line; paragraph: body text (line breaks kept)'),
  text: words(10_000).describe('Plain text with merge tags; HTML in it is shown as written, not interpreted'),
  align,
});
const image = z.strictObject({
  type: z.literal('image'),
  id,
  src: optionalLink.describe('The image URL (empty: not shown until one is given)'),
  alt: words(300),
  href: optionalLink.describe('Where a click on the image goes (empty: nowhere)'),
  width: z.number().int().min(20).max(600).describe('Largest width in pixels; narrower screens shrink it'),
  align,
});
const button = z.strictObject({
  type: z.literal('button'),
  id,
  label: words(200).min(1),
  url: link,
  color: color.describe('The button colour'),
  textColor: color,
  align,
});
const divider = z.strictObject({ type: z.literal('divider'), id, color });
const spacer = z.strictObject({ type: z.literal('spacer'), id, height: z.number().int().min(4).max(200).describe('Height in pixels') });
const social = z.strictObject({
  type: z.literal('social'),
  id,
  links: z
    .array(z.strictObject({ network: z.enum(['website', 'x', 'facebook', 'instagram', 'linkedin', 'youtube', 'github']), url: link }))
    .max(10)
    .describe('Shown as text links (no images are fetched from a third party)'),
  align,
});
const footer = z.strictObject({ type: z.literal('footer'), id, text: words(2000).describe('Small print with merge tags: address, why the reader gets this email') });

const leaf = z.discriminatedUnion('type', [text, image, button, divider, spacer, social, footer]);
const columns = z.strictObject({
  type: z.literal('columns'),
  id,
  columns: z
    .array(z.array(leaf).max(MAX_COLUMN_BLOCKS))
    .min(2)
    .max(3)
    .describe('Two or three columns side by side, each a list of blocks (no columns inside columns); stacked on narrow screens'),
});

export const emailDesign = z
  .strictObject({
    version: z.literal(1),
    settings: z.strictObject({
      backgroundColor: color.describe('Around the email'),
      contentColor: color.describe('Behind the blocks'),
      textColor: color,
      fontFamily: z.enum(['sans-serif', 'serif']).describe('A web-safe stack: no font is fetched'),
    }),
    blocks: z.array(z.discriminatedUnion('type', [text, image, button, divider, spacer, social, footer, columns])).max(MAX_BLOCKS),
  })
  .refine((design) => Buffer.byteLength(JSON.stringify(design), 'utf8') <= DESIGN_MAX_BYTES, 'must be at most 256 KiB as JSON')
  .meta({
    id: 'EmailDesign',
    description:
      "The dashboard's visual editor's document: blocks (text, image, button, columns, divider, spacer, social, footer) and page " +
      'settings, at most 100 blocks and 256 KiB as JSON. Stored as given beside `html` so the editor reopens it; Herald sends ' +
      '`html`, never renders the design itself. A change of `html` without `design` drops the design (it would no longer describe the HTML).',
  });

export type EmailDesign = z.output<typeof emailDesign>;
