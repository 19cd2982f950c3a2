// The visual editor's document edits by block id, its starters (each one the API accepts), and the email HTML rendered.
import { describe, expect, it } from 'vitest';
import { emailDesign } from '../../../server/src/modules/email-templates/index.js';
import { addBlock, blockSummary, findBlock, insertAt, mergeTag, moveBlock, newBlock, removeBlock, STARTERS, updateBlock, type EmailDesign } from './email-design-model';
import { renderDesign } from './email-design-render';

const blank = (): EmailDesign => STARTERS.find((starter) => starter.key === 'blank')!.design();

describe('editing a design', () => {
  it('adds at the top level and inside a column, changes, moves within its own list and removes, by id', () => {
    const columns = newBlock('columns');
    const button = newBlock('button');
    let design = addBlock(addBlock(blank(), newBlock('divider')), columns);
    design = addBlock(design, button, { columnsId: columns.id, column: 1 });
    expect(design.blocks.map((block) => block.type)).toEqual(['divider', 'columns']);
    expect(findBlock(design, button.id)).toEqual(button);
    // A columns block never goes inside a column.
    expect(addBlock(design, newBlock('columns'), { columnsId: columns.id, column: 0 })).toBe(design);

    design = updateBlock(design, button.id, { label: 'Buy now' });
    expect(blockSummary(findBlock(design, button.id)!)).toBe('Button: Buy now');
    design = moveBlock(design, button.id, -1);
    const inColumn = (design.blocks[1] as typeof columns).columns[1]!;
    expect(inColumn.map((block) => block.id)).toEqual([button.id, expect.any(String)]);
    expect(moveBlock(design, design.blocks[0]!.id, -1).blocks[0]!.type).toBe('divider');
    design = moveBlock(design, columns.id, -1);
    expect(design.blocks.map((block) => block.type)).toEqual(['columns', 'divider']);
    design = removeBlock(design, button.id);
    expect(findBlock(design, button.id)).toBeUndefined();
  });

  it('inserts a merge tag that renders empty when the variable is missing, at the cursor', () => {
    expect(insertAt('Hello !', 6, 6, mergeTag(' first_name '))).toEqual({ value: 'Hello {{ first_name | default: "" }}!', cursor: 36 });
  });

  it.each(STARTERS.map((starter) => [starter.key, starter] as const))('offers the %s starter, which the API accepts as it is', (_key, starter) => {
    const design = starter.design();
    expect(emailDesign.safeParse(design).error).toBeUndefined();
    // Made anew each time: two picks share no block id.
    const ids = (d: EmailDesign): string[] => JSON.stringify(d).match(/"id":"[^"]+"/g) ?? [];
    expect(ids(starter.design()).some((id) => ids(design).includes(id))).toBe(false);
  });
});

describe('the email HTML of a design', () => {
  const design: EmailDesign = {
    ...blank(),
    blocks: [
      { ...newBlock('text'), text: 'Hi {{ first_name | default: "there" }} & <you>\nsecond line' },
      { ...newBlock('button'), label: 'Go', url: 'https://example.com/?u={{ external_id | default: "x" }}' },
      { ...newBlock('columns'), columns: [[newBlock('spacer')], [{ ...newBlock('image'), src: 'https://example.com/a.png', alt: 'A' }]] },
      { ...newBlock('image'), src: '' },
      newBlock('social'),
    ],
  };
  const html = renderDesign(design);

  it('lays out with tables and inline styles, no script, stylesheet link or remote font', () => {
    expect(html.startsWith('<!DOCTYPE html')).toBe(true);
    expect(html.match(/<table[^>]*role="presentation"/g)?.length).toBeGreaterThan(3);
    expect(html).toMatch(/<a[^>]*style="[^"]*background-color:#2563eb/);
    expect(html).toContain('@media only screen and (max-width: 480px)');
    expect(html).not.toMatch(/<script|<link|@import|url\(/);
  });

  it('keeps merge tags as liquid reads them, escapes the rest of the text, and keeps line breaks', () => {
    expect(html).toContain('Hi {{ first_name | default: "there" }} &amp; &lt;you&gt;<br/>second line');
    // In an attribute a double quote would end the value: the tag's string takes single quotes there.
    expect(html).toContain(`href="https://example.com/?u={{ external_id | default: 'x' }}"`);
  });

  it('leaves out an image without a URL and shows social links as text', () => {
    expect(html.match(/<img/g)?.length).toBe(1);
    expect(html).toMatch(/<a[^>]*href="https:\/\/example.com"[^>]*>Website<\/a>/);
  });
});
