// The visual email editor: a starter or a blank page, the block palette, the outline (select, move, remove), the chosen
// block's settings with merge-tag insertion, and the page's colours. Every edit hands back the design and its HTML.
// Loaded on demand (React.lazy) with React Email and React's server renderer.
import { useId, useMemo, useRef, useState } from 'react';
import { ApiError, belongsTo } from '../api/client';
import { Field, SelectField, TextAreaField } from './field';
import {
  addBlock,
  BLOCK_NAMES,
  blockSummary,
  findBlock,
  insertAt,
  mergeTag,
  moveBlock,
  newBlock,
  removeBlock,
  SOCIAL_NAMES,
  SOCIAL_NETWORKS,
  STARTERS,
  updateBlock,
  type Block,
  type BlockType,
  type EmailDesign,
  type LeafBlock,
  type Place,
} from './email-design-model';
import { renderDesign } from './email-design-render';

export interface EmailDesignEditorProps {
  /** null: nothing designed yet, the starters are offered. */
  design: EmailDesign | null;
  onChange: (design: EmailDesign, html: string) => void;
  /** Names offered in the merge-tag menu (any other may be typed). */
  mergeTags: string[];
  /** The save's or preview's error; its details on `fieldPrefix.blocks.…` are shown beside the block's fields. */
  error: unknown;
  fieldPrefix: string;
  disabled: boolean;
}

const PALETTE: BlockType[] = ['text', 'image', 'button', 'columns', 'divider', 'spacer', 'social', 'footer'];

/** The API's path of a block: `blocks.3`, or `blocks.2.columns.1.0` inside a column. */
function pathOf(design: EmailDesign, id: string): string {
  for (const [index, block] of design.blocks.entries()) {
    if (block.id === id) return `blocks.${index}`;
    if (block.type === 'columns') {
      for (const [column, list] of block.columns.entries()) {
        const at = list.findIndex((inner) => inner.id === id);
        if (at >= 0) return `blocks.${index}.columns.${column}.${at}`;
      }
    }
  }
  return 'blocks';
}

export default function EmailDesignEditor({ design, onChange, mergeTags, error, fieldPrefix, disabled }: EmailDesignEditorProps) {
  const [selected, setSelected] = useState<string | null>(null);
  const change = (next: EmailDesign) => onChange(next, renderDesign(next));
  if (!design) return <StarterGallery onPick={(picked) => change(picked)} disabled={disabled} />;
  const chosen = selected ? findBlock(design, selected) : undefined;
  const add = (type: BlockType, place: Place = null) => {
    const block = newBlock(type);
    change(addBlock(design, block, place));
    setSelected(block.id);
  };
  // The API's words on blocks that are not chosen would be out of sight: listed here, each a way to its block.
  const problems = error instanceof ApiError ? (error.details ?? []).filter((detail) => belongsTo(detail.field, fieldPrefix)) : [];
  const blockOf = (field: string) => design.blocks.flatMap((block) => (block.type === 'columns' ? [...block.columns.flat(), block] : [block])).find((block) => belongsTo(field, `${fieldPrefix}.${pathOf(design, block.id)}`));
  return (
    <div className="design-editor">
      {problems.length > 0 && (
        <div className="error" role="alert">
          <p>The design has problems:</p>
          <ul>
            {problems.map((problem) => {
              const block = blockOf(problem.field);
              return (
                <li key={problem.field}>
                  {block ? (
                    <button type="button" className="outline-item" onClick={() => setSelected(block.id)}>
                      {blockSummary(block)}
                    </button>
                  ) : (
                    problem.field
                  )}
                  : {problem.error}
                </li>
              );
            })}
          </ul>
        </div>
      )}
      <fieldset className="card" disabled={disabled}>
        <legend>Add a block</legend>
        <div className="palette">
          {PALETTE.map((type) => (
            <button key={type} type="button" onClick={() => add(type)}>
              {BLOCK_NAMES[type]}
            </button>
          ))}
        </div>
      </fieldset>
      <section className="card" aria-labelledby="design-outline-title">
        <h3 id="design-outline-title">Blocks</h3>
        {design.blocks.length === 0 ? (
          <p className="muted">No blocks yet: add one above.</p>
        ) : (
          <Outline blocks={design.blocks} design={design} selected={selected} onSelect={setSelected} onChange={change} onAdd={add} disabled={disabled} />
        )}
      </section>
      {chosen && (
        <BlockSettings
          key={chosen.id}
          block={chosen}
          field={`${fieldPrefix}.${pathOf(design, chosen.id)}`}
          error={error}
          mergeTags={mergeTags}
          disabled={disabled}
          onChange={(patch) => change(updateBlock(design, chosen.id, patch))}
        />
      )}
      <PageSettings design={design} onChange={change} disabled={disabled} field={`${fieldPrefix}.settings`} error={error} />
      <details className="card">
        <summary>Start over from a starter design</summary>
        <StarterGallery onPick={(picked) => (change(picked), setSelected(null))} disabled={disabled} />
      </details>
    </div>
  );
}

function StarterGallery({ onPick, disabled }: { onPick: (design: EmailDesign) => void; disabled: boolean }) {
  return (
    <section aria-labelledby="starters-title">
      <h3 id="starters-title">Start from a design</h3>
      <ul className="starters">
        {STARTERS.map((starter) => (
          <li key={starter.key} className="card">
            <strong>{starter.name}</strong>
            <p className="muted">{starter.description}</p>
            <button type="button" disabled={disabled} onClick={() => onPick(starter.design())}>
              Use {starter.name}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

interface OutlineProps {
  blocks: Block[];
  design: EmailDesign;
  selected: string | null;
  onSelect: (id: string) => void;
  onChange: (design: EmailDesign) => void;
  onAdd: (type: BlockType, place: Place) => void;
  disabled: boolean;
}

function Outline({ blocks, design, selected, onSelect, onChange, onAdd, disabled }: OutlineProps) {
  return (
    <ol className="outline">
      {blocks.map((block, index) => {
        const summary = blockSummary(block);
        return (
          <li key={block.id} className={block.id === selected ? 'chosen' : undefined}>
            <div className="row">
              <button type="button" className="outline-item" aria-pressed={block.id === selected} onClick={() => onSelect(block.id)}>
                {summary}
              </button>
              <span className="outline-actions">
                <button type="button" disabled={disabled || index === 0} aria-label={`Move up: ${summary}`} onClick={() => onChange(moveBlock(design, block.id, -1))}>
                  ↑
                </button>
                <button
                  type="button"
                  disabled={disabled || index === blocks.length - 1}
                  aria-label={`Move down: ${summary}`}
                  onClick={() => onChange(moveBlock(design, block.id, 1))}
                >
                  ↓
                </button>
                <button type="button" disabled={disabled} aria-label={`Remove: ${summary}`} onClick={() => onChange(removeBlock(design, block.id))}>
                  ✕
                </button>
              </span>
            </div>
            {block.type === 'columns' &&
              block.columns.map((list, column) => (
                <div key={column} className="outline-column">
                  <p className="muted">Column {column + 1}</p>
                  <Outline blocks={list} design={design} selected={selected} onSelect={onSelect} onChange={onChange} onAdd={onAdd} disabled={disabled} />
                  <AddToColumn label={`Add to column ${column + 1} of ${summary}`} onAdd={(type) => onAdd(type, { columnsId: block.id, column })} disabled={disabled} />
                </div>
              ))}
          </li>
        );
      })}
    </ol>
  );
}

function AddToColumn({ label, onAdd, disabled }: { label: string; onAdd: (type: Exclude<BlockType, 'columns'>) => void; disabled: boolean }) {
  const [type, setType] = useState<Exclude<BlockType, 'columns'>>('text');
  const id = useId();
  return (
    <div className="row align-end">
      <label className="visually-hidden" htmlFor={id}>
        {label}
      </label>
      <select id={id} value={type} disabled={disabled} onChange={(event) => setType(event.target.value as Exclude<BlockType, 'columns'>)}>
        {PALETTE.filter((kind) => kind !== 'columns').map((kind) => (
          <option key={kind} value={kind}>
            {BLOCK_NAMES[kind]}
          </option>
        ))}
      </select>
      <button type="button" disabled={disabled} onClick={() => onAdd(type)} aria-label={label}>
        Add
      </button>
    </div>
  );
}

type Editable = HTMLInputElement | HTMLTextAreaElement;

interface SettingsProps {
  block: Block;
  field: string;
  error: unknown;
  mergeTags: string[];
  disabled: boolean;
  onChange: (patch: Partial<Block>) => void;
}

/** The chosen block's fields; the merge-tag menu inserts into the text field last focused, at its cursor. */
function BlockSettings({ block, field, error, mergeTags, disabled, onChange }: SettingsProps) {
  const focused = useRef<{ element: Editable; key: string } | null>(null);
  const [tag, setTag] = useState('first_name');
  const listId = useId();
  const set = (patch: Record<string, unknown>) => onChange(patch as Partial<Block>);
  // Inputs that take merge tags register themselves as the insertion target when focused.
  const target = (key: string) => ({ onFocus: (event: { currentTarget: Editable }) => (focused.current = { element: event.currentTarget, key }) });
  const fallbackKey = block.type === 'button' ? 'label' : block.type === 'text' || block.type === 'footer' ? 'text' : null;
  const insert = () => {
    const into = focused.current ?? null;
    const key = into?.key ?? fallbackKey;
    if (!key || tag.trim() === '') return;
    const current = String((block as unknown as Record<string, unknown>)[key] ?? '');
    const start = into?.element.selectionStart ?? current.length;
    const end = into?.element.selectionEnd ?? current.length;
    const { value, cursor } = insertAt(current, start, end, mergeTag(tag));
    set({ [key]: value });
    const element = into?.element;
    if (element) {
      requestAnimationFrame(() => {
        element.focus();
        element.setSelectionRange(cursor, cursor);
      });
    }
  };
  const names = useMemo(() => [...new Set(mergeTags)], [mergeTags]);
  const takesTags = block.type !== 'divider' && block.type !== 'spacer' && block.type !== 'columns';
  return (
    <fieldset className="card block-settings" disabled={disabled}>
      <legend>{BLOCK_NAMES[block.type]} settings</legend>
      <LeafFields block={block} field={field} error={error} set={set} target={target} />
      {takesTags && (
        <div className="row align-end">
          <Field label="Merge tag" field="mergeTag" error={undefined} list={listId} value={tag} onChange={(event) => setTag(event.target.value)} hint="Inserted where the cursor is" />
          <datalist id={listId}>
            {names.map((name) => (
              <option key={name} value={name} />
            ))}
          </datalist>
          <button type="button" className="field-button" onClick={insert} disabled={tag.trim() === ''}>
            Insert merge tag
          </button>
        </div>
      )}
    </fieldset>
  );
}

type Target = (key: string) => { onFocus: (event: { currentTarget: Editable }) => void };

function Align({ value, set, field, error }: { value: string; set: (patch: Record<string, unknown>) => void; field: string; error: unknown }) {
  return (
    <SelectField label="Alignment" field={`${field}.align`} error={error} value={value} onChange={(event) => set({ align: event.target.value })}>
      <option value="left">Left</option>
      <option value="center">Centre</option>
      <option value="right">Right</option>
    </SelectField>
  );
}

function Colour({ label, value, onChange, field, error }: { label: string; value: string; onChange: (value: string) => void; field: string; error: unknown }) {
  return <Field label={label} field={field} error={error} type="color" value={value} onChange={(event) => onChange(event.target.value)} />;
}

function LeafFields({ block, field, error, set, target }: { block: Block; field: string; error: unknown; set: (patch: Record<string, unknown>) => void; target: Target }) {
  switch (block.type) {
    case 'text':
      return (
        <>
          <SelectField label="Style" field={`${field}.style`} error={error} value={block.style} onChange={(event) => set({ style: event.target.value })}>
            <option value="paragraph">Paragraph</option>
            <option value="heading">Heading</option>
          </SelectField>
          <TextAreaField label="Text" field={`${field}.text`} error={error} rows={5} maxLength={10_000} value={block.text} onChange={(event) => set({ text: event.target.value })} {...target('text')} />
          <Align value={block.align} set={set} field={field} error={error} />
        </>
      );
    case 'image':
      return (
        <>
          <Field label="Image URL" field={`${field}.src`} error={error} type="url" hint="An https:// address; the image is not shown until one is given." value={block.src} onChange={(event) => set({ src: event.target.value })} />
          <Field label="Alternative text" field={`${field}.alt`} error={error} maxLength={300} value={block.alt} onChange={(event) => set({ alt: event.target.value })} />
          <Field label="Link (optional)" field={`${field}.href`} error={error} value={block.href} onChange={(event) => set({ href: event.target.value })} {...target('href')} />
          <Field label="Width in pixels" field={`${field}.width`} error={error} type="number" min={20} max={600} value={block.width} onChange={(event) => set({ width: Number(event.target.value) })} />
          <Align value={block.align} set={set} field={field} error={error} />
        </>
      );
    case 'button':
      return (
        <>
          <Field label="Button text" field={`${field}.label`} error={error} maxLength={200} value={block.label} onChange={(event) => set({ label: event.target.value })} {...target('label')} />
          <Field label="Link" field={`${field}.url`} error={error} value={block.url} onChange={(event) => set({ url: event.target.value })} {...target('url')} />
          <Colour label="Button colour" field={`${field}.color`} error={error} value={block.color} onChange={(color) => set({ color })} />
          <Colour label="Text colour" field={`${field}.textColor`} error={error} value={block.textColor} onChange={(textColor) => set({ textColor })} />
          <Align value={block.align} set={set} field={field} error={error} />
        </>
      );
    case 'divider':
      return <Colour label="Line colour" field={`${field}.color`} error={error} value={block.color} onChange={(color) => set({ color })} />;
    case 'spacer':
      return (
        <Field label="Height in pixels" field={`${field}.height`} error={error} type="number" min={4} max={200} value={block.height} onChange={(event) => set({ height: Number(event.target.value) })} />
      );
    case 'social':
      return (
        <>
          {block.links.map((link, index) => (
            <div key={index} className="row align-end">
              <SelectField
                label={`Link ${index + 1}: network`}
                field={`${field}.links.${index}.network`}
                error={error}
                value={link.network}
                onChange={(event) => set({ links: block.links.map((other, at) => (at === index ? { ...other, network: event.target.value } : other)) })}
              >
                {SOCIAL_NETWORKS.map((network) => (
                  <option key={network} value={network}>
                    {SOCIAL_NAMES[network]}
                  </option>
                ))}
              </SelectField>
              <Field
                label={`Link ${index + 1}: URL`}
                field={`${field}.links.${index}.url`}
                error={error}
                value={link.url}
                onChange={(event) => set({ links: block.links.map((other, at) => (at === index ? { ...other, url: event.target.value } : other)) })}
              />
              <button type="button" className="field-button" aria-label={`Remove link ${index + 1}`} onClick={() => set({ links: block.links.filter((_, at) => at !== index) })}>
                Remove
              </button>
            </div>
          ))}
          {block.links.length < 10 && (
            <button type="button" onClick={() => set({ links: [...block.links, { network: 'website', url: 'https://example.com' }] })}>
              Add a link
            </button>
          )}
          <Align value={block.align} set={set} field={field} error={error} />
        </>
      );
    case 'footer':
      return <TextAreaField label="Footer text" field={`${field}.text`} error={error} rows={3} maxLength={2000} value={block.text} onChange={(event) => set({ text: event.target.value })} {...target('text')} />;
    case 'columns':
      return (
        <SelectField
          label="Number of columns"
          field={`${field}.columns`}
          error={error}
          value={block.columns.length}
          onChange={(event) => {
            const count = Number(event.target.value);
            const columns: LeafBlock[][] = Array.from({ length: count }, (_, at) => block.columns[at] ?? [newBlock('text')]);
            set({ columns });
          }}
        >
          <option value={2}>Two</option>
          <option value={3}>Three</option>
        </SelectField>
      );
  }
}

function PageSettings({ design, onChange, disabled, field, error }: { design: EmailDesign; onChange: (design: EmailDesign) => void; disabled: boolean; field: string; error: unknown }) {
  const { settings } = design;
  const set = (patch: Partial<EmailDesign['settings']>) => onChange({ ...design, settings: { ...settings, ...patch } });
  return (
    <details className="card">
      <summary>Page settings</summary>
      <fieldset disabled={disabled} className="plain">
        <legend className="visually-hidden">Page settings</legend>
        <Colour label="Page colour" field={`${field}.backgroundColor`} error={error} value={settings.backgroundColor} onChange={(backgroundColor) => set({ backgroundColor })} />
        <Colour label="Content colour" field={`${field}.contentColor`} error={error} value={settings.contentColor} onChange={(contentColor) => set({ contentColor })} />
        <Colour label="Text colour" field={`${field}.textColor`} error={error} value={settings.textColor} onChange={(textColor) => set({ textColor })} />
        <SelectField label="Font" field={`${field}.fontFamily`} error={error} value={settings.fontFamily} onChange={(event) => set({ fontFamily: event.target.value as EmailDesign['settings']['fontFamily'] })}>
          <option value="sans-serif">Sans-serif (Helvetica, Arial)</option>
          <option value="serif">Serif (Georgia, Times)</option>
        </SelectField>
      </fieldset>
    </details>
  );
}
