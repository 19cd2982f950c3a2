// The visual email editor's document (the API's EmailDesign): new blocks, the starter designs, and edits by block id
// (add, change, move, remove, at the top level or inside a column). No DOM: tested in Node (email-design-model.test.ts).
import type { Schemas } from '../api/client';

export type EmailDesign = Schemas['EmailDesign'];
export type Block = EmailDesign['blocks'][number];
export type BlockType = Block['type'];
export type ColumnsBlock = Extract<Block, { type: 'columns' }>;
export type LeafBlock = ColumnsBlock['columns'][number][number];
export type DesignSettings = EmailDesign['settings'];

export const BLOCK_NAMES: Record<BlockType, string> = {
  text: 'Text',
  image: 'Image',
  button: 'Button',
  columns: 'Columns',
  divider: 'Divider',
  spacer: 'Spacer',
  social: 'Social links',
  footer: 'Footer',
};

export const SOCIAL_NETWORKS = ['website', 'x', 'facebook', 'instagram', 'linkedin', 'youtube', 'github'] as const;
export type SocialNetwork = (typeof SOCIAL_NETWORKS)[number];
export const SOCIAL_NAMES: Record<SocialNetwork, string> = {
  website: 'Website',
  x: 'X',
  facebook: 'Facebook',
  instagram: 'Instagram',
  linkedin: 'LinkedIn',
  youtube: 'YouTube',
  github: 'GitHub',
};

const DEFAULT_SETTINGS: DesignSettings = { backgroundColor: '#f4f4f5', contentColor: '#ffffff', textColor: '#18181b', fontFamily: 'sans-serif' };

let counter = 0;
/** A block id unique in a design: time and a counter, in the characters the API takes. */
export function newBlockId(): string {
  counter += 1;
  return `b${Date.now().toString(36)}${counter.toString(36)}`;
}

export type BlockOf<T extends BlockType> = Extract<Block, { type: T }>;

/** A block of this type with its defaults. */
export function newBlock<T extends BlockType>(type: T): BlockOf<T> {
  return defaults(type) as BlockOf<T>;
}

function defaults(type: BlockType): Block {
  const id = newBlockId();
  switch (type) {
    case 'text':
      return { type, id, style: 'paragraph', text: 'Write something here.', align: 'left' };
    case 'image':
      return { type, id, src: '', alt: '', href: '', width: 560, align: 'center' };
    case 'button':
      return { type, id, label: 'Open', url: 'https://example.com', color: '#2563eb', textColor: '#ffffff', align: 'center' };
    case 'columns':
      return { type, id, columns: [[newBlock('text')], [newBlock('text')]] };
    case 'divider':
      return { type, id, color: '#e4e4e7' };
    case 'spacer':
      return { type, id, height: 24 };
    case 'social':
      return { type, id, links: [{ network: 'website', url: 'https://example.com' }], align: 'center' };
    case 'footer':
      return { type, id, text: 'You receive this email because you signed up at example.com.' };
  }
}

const text = (style: 'heading' | 'paragraph', value: string, align: 'left' | 'center' = 'left'): LeafBlock => ({ ...newBlock('text'), style, text: value, align });
const button = (label: string, url: string): LeafBlock => ({ ...newBlock('button'), label, url });

export interface Starter {
  key: string;
  name: string;
  description: string;
  design: () => EmailDesign;
}

/** Starting points: each is a whole design to edit, made anew (fresh ids) every time one is picked. */
export const STARTERS: Starter[] = [
  { key: 'blank', name: 'Blank', description: 'An empty page to add blocks to.', design: () => ({ version: 1, settings: { ...DEFAULT_SETTINGS }, blocks: [] }) },
  {
    key: 'newsletter',
    name: 'Newsletter',
    description: 'A heading, an introduction, two stories side by side and a footer.',
    design: () => ({
      version: 1,
      settings: { ...DEFAULT_SETTINGS },
      blocks: [
        text('heading', 'This month at Example'),
        text('paragraph', 'Hello {{ first_name | default: "there" }},\nhere is what happened this month.'),
        { ...newBlock('image'), alt: 'Our picture of the month' },
        {
          ...newBlock('columns'),
          columns: [
            [text('heading', 'New feature'), text('paragraph', 'A few lines about it.'), button('Read more', 'https://example.com/blog/feature')],
            [text('heading', 'From the blog'), text('paragraph', 'A few lines about it.'), button('Read more', 'https://example.com/blog')],
          ],
        },
        newBlock('divider'),
        newBlock('social'),
        newBlock('footer'),
      ],
    }),
  },
  {
    key: 'announcement',
    name: 'Announcement',
    description: 'One message and one button, centred.',
    design: () => ({
      version: 1,
      settings: { ...DEFAULT_SETTINGS },
      blocks: [
        { ...newBlock('spacer'), height: 16 },
        text('heading', 'Something new is here', 'center'),
        text('paragraph', 'Tell your readers what changed and why it matters to them.', 'center'),
        button('See what is new', 'https://example.com/new'),
        { ...newBlock('spacer'), height: 16 },
        newBlock('footer'),
      ],
    }),
  },
  {
    key: 'receipt',
    name: 'Receipt',
    description: 'A transactional email: order number, amounts in two columns, a link to the order.',
    design: () => ({
      version: 1,
      settings: { ...DEFAULT_SETTINGS },
      blocks: [
        text('heading', 'Thank you for your order'),
        text('paragraph', 'Order {{ order_number | default: "" }} is confirmed.'),
        newBlock('divider'),
        {
          ...newBlock('columns'),
          columns: [
            [text('paragraph', 'Total')],
            [{ ...text('paragraph', '{{ total | default: "" }}'), align: 'right' }],
          ],
        },
        newBlock('divider'),
        button('View your order', 'https://example.com/orders'),
        { ...newBlock('footer'), text: 'Questions? Reply to this email.' },
      ],
    }),
  },
  {
    key: 'plain',
    name: 'Plain',
    description: 'A letter: text only, like an email written by hand.',
    design: () => ({
      version: 1,
      settings: { ...DEFAULT_SETTINGS, backgroundColor: '#ffffff' },
      blocks: [text('paragraph', 'Hi {{ first_name | default: "there" }},\n\nWrite your message here.\n\nThanks,\nThe team')],
    }),
  },
];

/** Where a block sits: the top level, or a column of a columns block. */
export type Place = { columnsId: string; column: number } | null;

function mapLists(design: EmailDesign, change: (list: Block[], place: Place) => Block[]): EmailDesign {
  const blocks = change(design.blocks, null).map((block) =>
    block.type === 'columns'
      ? { ...block, columns: block.columns.map((list, column) => change(list, { columnsId: block.id, column }) as LeafBlock[]) }
      : block,
  );
  return { ...design, blocks };
}

/** The block with this id, wherever it is. */
export function findBlock(design: EmailDesign, id: string): Block | undefined {
  for (const block of design.blocks) {
    if (block.id === id) return block;
    if (block.type === 'columns') for (const list of block.columns) for (const inner of list) if (inner.id === id) return inner;
  }
  return undefined;
}

export function updateBlock(design: EmailDesign, id: string, patch: Partial<Block>): EmailDesign {
  return mapLists(design, (list) => list.map((block) => (block.id === id ? ({ ...block, ...patch } as Block) : block)));
}

export function removeBlock(design: EmailDesign, id: string): EmailDesign {
  return mapLists(design, (list) => list.filter((block) => block.id !== id));
}

/** Moves a block one place up (-1) or down (+1) in its own list; at either end it stays. */
export function moveBlock(design: EmailDesign, id: string, by: -1 | 1): EmailDesign {
  return mapLists(design, (list) => {
    const at = list.findIndex((block) => block.id === id);
    const to = at + by;
    if (at < 0 || to < 0 || to >= list.length) return list;
    const moved = [...list];
    [moved[at], moved[to]] = [moved[to]!, moved[at]!];
    return moved;
  });
}

/** Adds `block` at the end of the top level, or of a column (a columns block only goes to the top level). */
export function addBlock(design: EmailDesign, block: Block, place: Place = null): EmailDesign {
  if (place === null) return { ...design, blocks: [...design.blocks, block] };
  if (block.type === 'columns') return design;
  return mapLists(design, (list, at) => (at && at.columnsId === place.columnsId && at.column === place.column ? [...list, block] : list));
}

/** What a block says in the outline: its kind and the start of its words. */
export function blockSummary(block: Block): string {
  const name = BLOCK_NAMES[block.type];
  const words =
    block.type === 'text' || block.type === 'footer'
      ? block.text
      : block.type === 'button'
        ? block.label
        : block.type === 'image'
          ? block.alt || block.src
          : block.type === 'spacer'
            ? `${block.height} px`
            : block.type === 'columns'
              ? `${block.columns.length} columns`
              : block.type === 'social'
                ? block.links.map((link) => SOCIAL_NAMES[link.network]).join(', ')
                : '';
  const short = words.length > 40 ? `${words.slice(0, 40)}…` : words;
  return short ? `${name}: ${short}` : name;
}

/** A merge tag that renders empty rather than failing the send when the variable is missing. */
export function mergeTag(name: string): string {
  return `{{ ${name.trim()} | default: "" }}`;
}

/** `value` with `insertion` replacing the selection [start, end), and where the cursor goes: right after it. */
export function insertAt(value: string, start: number, end: number, insertion: string): { value: string; cursor: number } {
  return { value: value.slice(0, start) + insertion + value.slice(end), cursor: start + insertion.length };
}
