// The condition builder: "People who match all / any of" rows of attribute, event, segment and device/location
// conditions, nested groups, with typeahead from the project's attributes, events and their properties. Serves the
// segment editor, the campaign builders' inline audience and automation condition steps; the tree is
// pages/filters-tree-model.ts.
import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { api, ApiError, unwrap, type Schemas } from '../api/client';
import {
  COUNT_OPERATORS,
  COUNT_WORDS,
  editField,
  FIELD_KEYS,
  FIELD_LABELS,
  filtersOf,
  isInline,
  MAX_DEPTH,
  newRow,
  newTime,
  newWhere,
  OPERATORS,
  operatorWords,
  problemsOf,
  propertyType,
  retype,
  TIME_OPERATORS,
  TYPE_LABELS,
  updateRow,
  VALUE_TYPES,
  type Comparison,
  type EventRow,
  type Group,
  type Paths,
  type Row,
} from '../pages/filters-tree-model';
import type { SegmentNames } from './audience-sentence';
import { Field, SelectField } from './field';
import { SegmentFilterField, useDebounced } from './segment-filter-fields';

/**
 * The error the builder's controls show: the tree's own problems once `showProblems` (a save was tried), else the
 * API's (its 422 details carry the same paths).
 */
export function treeError(tree: Group, prefix: string, showProblems: boolean, apiError: unknown): unknown {
  const problems = showProblems ? problemsOf(tree, prefix) : [];
  return problems.length ? new ApiError(422, 'validation_failed', 'Some conditions need changing', problems) : apiError;
}

/** The project's saved segments' names, for sentences that name a segment a condition refers to. */
export function useSegmentNames(projectId: string): SegmentNames {
  const segments = useSegments(projectId);
  return (id) => segments.data?.data.find((segment) => segment.id === id)?.name;
}

/** The project's saved segments (the first 100), for the pickers and sentences that name them. */
export const useSegments = (projectId: string) =>
  useQuery({
    queryKey: ['segments', projectId, 'all'],
    queryFn: () => unwrap(api.GET('/segments/project/{projectId}', { params: { path: { projectId }, query: { pageSize: 100 } } })),
  });

interface Props {
  projectId: string;
  tree: Group;
  setTree: (tree: Group) => void;
  error: unknown;
  /** Where the filters sit in the request body: `filters`, `segment.filters`, `criteria.subscriber`. */
  prefix?: string;
  /** The segment being edited, not offered to itself. */
  segmentId?: string;
  /** What the top group's people are called: "People" in a segment, "Subscribers" in a condition step. */
  who?: string;
}

interface Context {
  projectId: string;
  paths: Paths;
  error: unknown;
  lists: { attributes: string; events: string };
  attributes: Schemas['Attribute'][];
  segmentId: string | undefined;
  set: (id: string, row: Row | undefined) => void;
  add: (groupId: string | undefined, row: Row) => void;
}

export function ConditionBuilder({ projectId, tree, setTree, error, prefix = 'filters', segmentId, who = 'People' }: Props) {
  const uid = useId();
  const { paths } = filtersOf(tree, prefix);
  const [focusId, setFocusId] = useState<string>();
  const root = useRef<HTMLDivElement>(null);
  const attributes = useQuery({
    queryKey: ['attributes', projectId],
    queryFn: () => unwrap(api.GET('/projects/{projectId}/attributes', { params: { path: { projectId } } })),
    staleTime: 60_000,
  });
  const events = useQuery({
    queryKey: ['event-counts', projectId, 365],
    queryFn: () => unwrap(api.GET('/events/project/{projectId}/counts', { params: { path: { projectId }, query: { days: 365 } } })),
    staleTime: 60_000,
  });
  // A new row's first control takes the focus, so the keyboard goes on from where "+ Condition" was.
  useEffect(() => {
    if (!focusId) return;
    root.current?.querySelector<HTMLElement>(`[data-row="${CSS.escape(focusId)}"] :is(input, select)`)?.focus();
    setFocusId(undefined);
  }, [focusId]);
  const context: Context = {
    projectId,
    paths,
    error,
    lists: { attributes: `${uid}-attributes`, events: `${uid}-events` },
    attributes: attributes.data?.data ?? [],
    segmentId,
    set: (id, row) => setTree(updateRow(tree, id, row)),
    add: (groupId, row) => {
      setFocusId(row.id);
      if (groupId === undefined) setTree({ ...tree, rows: [...tree.rows, row] });
      else {
        const found = findRow(tree, groupId);
        if (found?.kind === 'group') setTree(updateRow(tree, groupId, { ...found, group: { ...found.group, rows: [...found.group.rows, row] } }));
      }
    },
  };
  return (
    <div ref={root} className="condition-builder">
      <datalist id={context.lists.attributes}>
        {context.attributes.map((attribute) => (
          <option key={attribute.name} value={attribute.name} />
        ))}
      </datalist>
      <datalist id={context.lists.events}>
        {events.data?.data.map((event) => <option key={event.name} value={event.name} />)}
      </datalist>
      <GroupEditor context={context} group={tree} label="" depth={1} who={who} onMatch={(match) => setTree({ ...tree, match })} />
    </div>
  );
}

function findRow(group: Group, id: string): Row | undefined {
  for (const row of group.rows) {
    if (row.id === id) return row;
    if (row.kind === 'group') {
      const found = findRow(row.group, id);
      if (found) return found;
    }
  }
  return undefined;
}

/** The messages of the error that name exactly `field` (a row's or group's own problem, not its controls'). */
function OwnProblem({ error, field }: { error: unknown; field: string | undefined }) {
  if (!(error instanceof ApiError) || field === undefined) return null;
  const messages = [...new Set((error.details ?? []).filter((detail) => detail.field === field).map((detail) => detail.error))];
  return messages.length ? (
    <p className="field-error" role="alert">
      {messages.join('; ')}
    </p>
  ) : null;
}

function GroupEditor({
  context,
  group,
  groupId,
  label,
  depth,
  who,
  onMatch,
}: {
  context: Context;
  group: Group;
  groupId?: string;
  label: string;
  depth: number;
  who?: string;
  onMatch: (match: Group['match']) => void;
}) {
  const matchId = useId();
  const name = label ? `Group ${label}` : 'Conditions';
  return (
    <div role="group" aria-label={name} className={label ? 'condition-group nested' : 'condition-group'}>
      <p className="condition-match">
        <label htmlFor={matchId}>{who ? `${who} who match` : 'Match'}</label>{' '}
        <select id={matchId} value={group.match} onChange={(event) => onMatch(event.target.value as Group['match'])}>
          <option value="all">all</option>
          <option value="any">any</option>
        </select>{' '}
        <span>of{group.rows.length === 0 && !label ? ' these conditions (none yet: everyone subscribed)' : ':'}</span>
      </p>
      <OwnProblem error={context.error} field={groupId === undefined ? undefined : context.paths[groupId]} />
      {group.rows.length > 0 && (
        <ol className="conditions">
          {group.rows.map((row, i) => {
            const number = label ? `${label}.${i + 1}` : String(i + 1);
            return (
              <li key={row.id} data-row={row.id}>
                <RowEditor context={context} row={row} number={number} depth={depth} />
              </li>
            );
          })}
        </ol>
      )}
      <AddMenu context={context} groupId={groupId} canGroup={depth < MAX_DEPTH} />
    </div>
  );
}

const ADD_KINDS: { kind: 'attribute' | 'event' | 'segment'; label: string }[] = [
  { kind: 'attribute', label: 'Attribute' },
  { kind: 'event', label: 'Event' },
  { kind: 'segment', label: 'In segment' },
];

/** "+ Condition" (a disclosure of the kinds of condition) and "+ Group". */
function AddMenu({ context, groupId, canGroup }: { context: Context; groupId: string | undefined; canGroup: boolean }) {
  const [open, setOpen] = useState(false);
  const menuId = useId();
  const toggle = useRef<HTMLButtonElement>(null);
  const add = (kind: Parameters<typeof newRow>[0]) => {
    setOpen(false);
    context.add(groupId, newRow(kind));
  };
  return (
    <div
      className="condition-add"
      onKeyDown={(event) => {
        if (event.key === 'Escape' && open) {
          setOpen(false);
          toggle.current?.focus();
        }
      }}
    >
      <div className="row">
        <button type="button" ref={toggle} aria-expanded={open} aria-controls={menuId} onClick={() => setOpen(!open)}>
          + Condition
        </button>
        {canGroup && (
          <button type="button" onClick={() => add('group')}>
            + Group
          </button>
        )}
      </div>
      <div id={menuId} hidden={!open} className="condition-kinds" role="group" aria-label="Kind of condition">
        <p className="hint">Who people are and what they did</p>
        <div className="palette">
          {ADD_KINDS.map(({ kind, label }) => (
            <button type="button" key={kind} onClick={() => add(kind)}>
              {label}
            </button>
          ))}
        </div>
        <p className="hint">Device, location and consent</p>
        <div className="palette">
          {FIELD_KEYS.map((key) => (
            <button type="button" key={key} onClick={() => add(key)}>
              {FIELD_LABELS[key]}
            </button>
          ))}
        </div>
      </div>
    </div>
  );
}

const KIND_LABELS: Record<Exclude<Row['kind'], 'field'>, string> = { attribute: 'Attribute', event: 'Event', segment: 'Segment', group: 'Group' };

function RowEditor({ context, row, number, depth }: { context: Context; row: Row; number: string; depth: number }) {
  const path = context.paths[row.id] ?? '';
  const set = (next: Row) => context.set(row.id, next);
  const kind = row.kind === 'field' ? FIELD_LABELS[row.field] : KIND_LABELS[row.kind];
  let body: ReactNode;
  switch (row.kind) {
    case 'attribute':
      body = <AttributeEditor context={context} row={row} path={path} set={set} />;
      break;
    case 'event':
      body = <EventEditor context={context} row={row} path={path} set={set} />;
      break;
    case 'segment':
      body = <SegmentEditor context={context} row={row} path={path} set={set} />;
      break;
    case 'field':
      body = (
        <>
          <SegmentFilterField field={row.field} state={row.state} setState={(state) => set(editField(row, state))} error={context.error} prefix={path} />
          <OwnProblem error={context.error} field={`${path}.${row.field}`} />
        </>
      );
      break;
    case 'group': {
      const inner = isInline(row.group) ? depth : depth + 1;
      body = (
        <GroupEditor
          context={context}
          group={row.group}
          groupId={row.id}
          label={number}
          depth={inner}
          onMatch={(match) => set({ ...row, group: { ...row.group, match } })}
        />
      );
    }
  }
  return (
    <div className={`condition ${row.kind}`} role={row.kind === 'group' ? undefined : 'group'} aria-label={row.kind === 'group' ? undefined : `Condition ${number}: ${kind}`}>
      <div className="condition-body">{body}</div>
      <button
        type="button"
        className="condition-remove"
        onClick={(event) => {
          // The row goes with the focused button: the focus moves to its group's "+ Condition", not to the page's top.
          const group = event.currentTarget.parentElement?.closest('.condition-group');
          context.set(row.id, undefined);
          requestAnimationFrame(() => group?.querySelector<HTMLElement>(':scope > .condition-add button')?.focus());
        }}
        aria-label={`Remove ${row.kind === 'group' ? 'group' : 'condition'} ${number}`}
      >
        Remove
      </button>
    </div>
  );
}

function useAttributeValues(projectId: string, name: string, q: string, enabled: boolean) {
  const typed = useDebounced(q, 300);
  return useQuery({
    queryKey: ['attribute-values', projectId, name, typed],
    queryFn: () => unwrap(api.GET('/projects/{projectId}/attributes/{name}/values', { params: { path: { projectId, name }, query: { q: typed } } })),
    enabled: enabled && name.trim() !== '',
    staleTime: 60_000,
  });
}

function AttributeEditor({ context, row, path, set }: { context: Context; row: Extract<Row, { kind: 'attribute' }>; path: string; set: (row: Row) => void }) {
  const known = context.attributes.find((attribute) => attribute.name === row.name.trim());
  const values = useAttributeValues(context.projectId, row.name.trim(), row.comparison.value, row.comparison.type === 'text' || row.comparison.type === 'number');
  return (
    <div className="condition-line">
      <Field
        label="Attribute"
        field={`${path}.attribute`}
        error={context.error}
        list={context.lists.attributes}
        autoComplete="off"
        value={row.name}
        onChange={(event) => {
          const name = event.target.value;
          const attribute = context.attributes.find((a) => a.name === name.trim());
          set({ ...row, name, comparison: attribute ? retype(row.comparison, attribute.type) : row.comparison });
        }}
      />
      {!known && row.name.trim() !== '' && (
        <TypeSelect value={row.comparison.type} path={path} error={context.error} hint="New attribute: its type" onChange={(type) => set({ ...row, comparison: retype(row.comparison, type) })} />
      )}
      <ComparisonEditor
        comparison={row.comparison}
        path={path}
        error={context.error}
        suggestions={values.data?.data.map((v) => String(v.value))}
        onChange={(comparison) => set({ ...row, comparison })}
      />
    </div>
  );
}

function TypeSelect({ value, path, error, hint, onChange }: { value: Comparison['type']; path: string; error: unknown; hint?: string; onChange: (type: Comparison['type']) => void }) {
  return (
    <SelectField label="Type" field={`${path}.type`} error={error} hint={hint} value={value} onChange={(event) => onChange(event.target.value as Comparison['type'])}>
      {VALUE_TYPES.map((type) => (
        <option key={type} value={type}>
          {TYPE_LABELS[type]}
        </option>
      ))}
    </SelectField>
  );
}

/** Operator and value(s) of a comparison, the operators its type takes; `operators` narrows them (first / last times). */
function ComparisonEditor({
  comparison,
  path,
  error,
  suggestions,
  operators = OPERATORS[comparison.type],
  onChange,
}: {
  comparison: Comparison;
  path: string;
  error: unknown;
  suggestions?: string[] | undefined;
  operators?: readonly Comparison['operator'][];
  onChange: (comparison: Comparison) => void;
}) {
  const listId = useId();
  const { type, operator, value, value2 } = comparison;
  const valueInput = (label: string, field: string, text: string, key: 'value' | 'value2') => {
    if (type === 'boolean') {
      return (
        <SelectField label={label} field={field} error={error} value={text} onChange={(event) => onChange({ ...comparison, [key]: event.target.value })}>
          <option value="">choose</option>
          <option value="true">yes (true)</option>
          <option value="false">no (false)</option>
        </SelectField>
      );
    }
    const date = type === 'date' && (text === '' || /^\d{4}-\d{2}-\d{2}$/.test(text));
    return (
      <Field
        label={label}
        field={field}
        error={error}
        type={date ? 'date' : 'text'}
        inputMode={type === 'number' ? 'decimal' : undefined}
        list={suggestions?.length && !date ? listId : undefined}
        autoComplete="off"
        hint={operator === 'in' ? 'Comma-separated' : undefined}
        value={text}
        onChange={(event) => onChange({ ...comparison, [key]: event.target.value })}
      />
    );
  };
  let values: ReactNode = null;
  if (operator === 'within_last_days' || operator === 'more_than_days_ago') {
    values = (
      <Field
        label="Days"
        field={`${path}.value`}
        error={error}
        type="number"
        min={1}
        max={36500}
        hint={operator === 'more_than_days_ago' ? 'days ago' : undefined}
        value={value}
        onChange={(event) => onChange({ ...comparison, value: event.target.value })}
      />
    );
  } else if (operator === 'between') {
    values = (
      <>
        {valueInput(type === 'date' ? 'From' : 'Low', `${path}.value.0`, value, 'value')}
        {valueInput(type === 'date' ? 'To' : 'High', `${path}.value.1`, value2, 'value2')}
      </>
    );
  } else if (operator !== 'exists' && operator !== 'not_exists') {
    values = valueInput(operator === 'in' ? 'Values' : 'Value', `${path}.value`, value, 'value');
  }
  return (
    <>
      <SelectField label="Operator" field={`${path}.operator`} error={error} value={operator} onChange={(event) => onChange({ ...comparison, operator: event.target.value as Comparison['operator'] })}>
        {operators.map((op) => (
          <option key={op} value={op}>
            {operatorWords(op, type)}
          </option>
        ))}
      </SelectField>
      {values}
      {suggestions && suggestions.length > 0 && (
        <datalist id={listId}>
          {suggestions.map((suggestion) => (
            <option key={suggestion} value={suggestion} />
          ))}
        </datalist>
      )}
    </>
  );
}

function EventEditor({ context, row, path, set }: { context: Context; row: EventRow; path: string; set: (row: Row) => void }) {
  const propertiesList = useId();
  const name = useDebounced(row.event.trim(), 300);
  const properties = useQuery({
    queryKey: ['event-properties', context.projectId, name],
    queryFn: () => unwrap(api.GET('/events/project/{projectId}/properties', { params: { path: { projectId: context.projectId }, query: { name } } })),
    enabled: name !== '',
    staleTime: 60_000,
  });
  const known = properties.data?.properties ?? [];
  const count = row.count ?? { operator: 'gte' as const, value: '1' };
  const time = (key: 'first' | 'last', label: string) => {
    const comparison = row[key];
    return comparison ? (
      <div className="condition-line" role="group" aria-label={`${label} time`}>
        <span className="condition-word">{label} time</span>
        <ComparisonEditor comparison={comparison} path={`${path}.${key}`} error={context.error} operators={TIME_OPERATORS} onChange={(next) => set({ ...row, [key]: next })} />
        <button type="button" onClick={() => set({ ...row, [key]: undefined })} aria-label={`Remove the ${label.toLowerCase()} time`}>
          Remove
        </button>
      </div>
    ) : null;
  };
  return (
    <>
      <div className="condition-line">
        <SelectField label="Did" field={`${path}.performed`} error={context.error} value={row.performed === false ? 'no' : 'yes'} onChange={(event) => set({ ...row, performed: event.target.value === 'no' ? false : row.performed === true ? true : undefined })}>
          <option value="yes">performed</option>
          <option value="no">did not perform</option>
        </SelectField>
        <Field label="Event" field={`${path}.event`} error={context.error} list={context.lists.events} autoComplete="off" value={row.event} onChange={(event) => set({ ...row, event: event.target.value })} />
        <SelectField
          label="How often"
          field={`${path}.count.operator`}
          error={context.error}
          value={count.operator}
          onChange={(event) => set({ ...row, count: { ...count, operator: event.target.value as typeof count.operator } })}
        >
          {COUNT_OPERATORS.map((op) => (
            <option key={op} value={op}>
              {COUNT_WORDS[op]}
            </option>
          ))}
        </SelectField>
        <Field
          label="Times"
          field={`${path}.count.value`}
          error={context.error}
          type="number"
          min={0}
          value={count.value}
          onChange={(event) => set({ ...row, count: { ...count, value: event.target.value } })}
        />
        <SelectField label="When" field={`${path}.window`} error={context.error} value={row.window} onChange={(event) => set({ ...row, window: event.target.value as EventRow['window'] })}>
          <option value="all">at any time</option>
          <option value="days">in the last … days</option>
          <option value="between">between dates</option>
        </SelectField>
        {row.window === 'days' && (
          <Field label="Days" field={`${path}.withinLastDays`} error={context.error} type="number" min={1} max={36500} value={row.days} onChange={(event) => set({ ...row, days: event.target.value })} />
        )}
        {row.window === 'between' && (
          <>
            <Field label="From" field={`${path}.between.from`} error={context.error} type="date" value={row.from} onChange={(event) => set({ ...row, from: event.target.value })} />
            <Field label="To" field={`${path}.between.to`} error={context.error} type="date" value={row.to} onChange={(event) => set({ ...row, to: event.target.value })} />
          </>
        )}
      </div>
      <datalist id={propertiesList}>
        {known.map((property) => (
          <option key={property.path} value={property.path} />
        ))}
      </datalist>
      {row.where.map((where, i) => {
        const property = known.find((p) => p.path === where.property.trim());
        const type = property && propertyType(property);
        const setWhere = (next: typeof where) => set({ ...row, where: row.where.map((w) => (w.id === where.id ? next : w)) });
        return (
          <div className="condition-line" key={where.id} role="group" aria-label={`Where ${i + 1}`}>
            <span className="condition-word">{i === 0 ? 'where' : 'and'}</span>
            <Field
              label="Property"
              field={`${path}.where.${i}.property`}
              error={context.error}
              list={propertiesList}
              autoComplete="off"
              value={where.property}
              onChange={(event) => {
                const found = known.find((p) => p.path === event.target.value.trim());
                const foundType = found && propertyType(found);
                setWhere({ ...where, property: event.target.value, comparison: foundType ? retype(where.comparison, foundType) : where.comparison });
              }}
            />
            {!type && <TypeSelect value={where.comparison.type} path={`${path}.where.${i}`} error={context.error} onChange={(type) => setWhere({ ...where, comparison: retype(where.comparison, type) })} />}
            <ComparisonEditor
              comparison={where.comparison}
              path={`${path}.where.${i}`}
              error={context.error}
              suggestions={property?.values.filter((v) => v.value !== null).map((v) => String(v.value))}
              onChange={(comparison) => setWhere({ ...where, comparison })}
            />
            <button type="button" onClick={() => set({ ...row, where: row.where.filter((w) => w.id !== where.id) })} aria-label={`Remove where ${i + 1}`}>
              Remove
            </button>
          </div>
        );
      })}
      {time('first', 'First')}
      {time('last', 'Last')}
      <div className="palette">
        <button type="button" onClick={() => set({ ...row, where: [...row.where, newWhere()] })}>
          + Where
        </button>
        {!row.first && (
          <button type="button" onClick={() => set({ ...row, first: newTime() })}>
            + First time
          </button>
        )}
        {!row.last && (
          <button type="button" onClick={() => set({ ...row, last: newTime() })}>
            + Last time
          </button>
        )}
      </div>
    </>
  );
}

function SegmentEditor({ context, row, path, set }: { context: Context; row: Extract<Row, { kind: 'segment' }>; path: string; set: (row: Row) => void }) {
  const segments = useSegments(context.projectId);
  const key = row.negate ? 'notInSegment' : 'inSegment';
  const offered = segments.data?.data.filter((segment) => segment.id !== context.segmentId) ?? [];
  return (
    <div className="condition-line">
      <SelectField label="Membership" field={`${path}.membership`} error={context.error} value={row.negate ? 'out' : 'in'} onChange={(event) => set({ ...row, negate: event.target.value === 'out' })}>
        <option value="in">is in</option>
        <option value="out">is not in</option>
      </SelectField>
      <SelectField label="Segment" field={`${path}.${key}`} error={context.error} value={row.segmentId} onChange={(event) => set({ ...row, segmentId: event.target.value })}>
        <option value="">choose a segment</option>
        {offered.map((segment) => (
          <option key={segment.id} value={segment.id}>
            {segment.name}
          </option>
        ))}
        {row.segmentId && segments.data && !offered.some((segment) => segment.id === row.segmentId) && <option value={row.segmentId}>(a segment not listed)</option>}
      </SelectField>
    </div>
  );
}

