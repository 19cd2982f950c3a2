// Merge tags ({{ first_name }}): the one liquid engine every email renders with — escaped in HTML, no files, bounded, strict.
import {
  AssignTag,
  CaseTag,
  IfTag,
  Liquid,
  LiquidError,
  TypeGuards,
  UndefinedVariableError,
  UnlessTag,
  Value,
  analyzeSync,
  toValueSync,
  type FilterImplOptions,
  type Template,
  type Token,
} from 'liquidjs';

/**
 * `html`: an HTML body, where every value is HTML-escaped on output (`| raw` opts out, on purpose); `text`: a
 * subject, a plain-text part or a preheader, which are not HTML and are written as given.
 */
export type MergeTagFormat = 'html' | 'text';

export const MERGE_TAG_LIMITS = {
  /** Characters one template text may have (liquid's parseLimit). */
  parseCharacters: 1_048_576,
  /** Milliseconds one render of one template text may take (liquid's renderLimit). */
  renderMilliseconds: 1000,
  /** Elements of the strings, arrays and ranges one render may build (liquid's memoryLimit). */
  memory: 10_000_000,
  /** Characters one rendered text may have: liquid bounds what filters build, not what loops write out. */
  renderedCharacters: 2_000_000,
} as const;

/** Something wrong with a template text, where liquid found it (1-based). */
export interface TemplateProblem {
  line: number;
  column: number;
  message: string;
}

/** A top-level name a template reads; `hasDefault`: rendering never fails for want of it. */
export interface TemplateVariable {
  name: string;
  hasDefault: boolean;
}

/** A parsed template text, ready to render for many recipients. */
export interface MergeTemplate {
  readonly format: MergeTagFormat;
  readonly variables: readonly TemplateVariable[];
  readonly parsed: Template[];
}

export type ParseOutcome = { ok: true; template: MergeTemplate } | { ok: false; problems: TemplateProblem[] };
export type RenderOutcome = { ok: true; text: string } | { ok: false; missing: string[] };

/** A render stopped by a limit or a failing filter: the template (or an absurd variable) is at fault, not a missing value. */
export class MergeTagRenderError extends Error {
  constructor(readonly problem: TemplateProblem) {
    super(`line ${problem.line}, column ${problem.column}: ${problem.message}`);
    this.name = 'MergeTagRenderError';
  }
}

type FilterHandler = Extract<FilterImplOptions, (...args: never[]) => unknown>;

const FILE_TAGS = ['include', 'render', 'layout'];
const DATE_FILTERS = ['date', 'date_to_xmlschema', 'date_to_rfc822', 'date_to_string', 'date_to_long_string'];
const NOW = new Set(['now', 'today']);
const CURRENT_TIME = 'the current time is not available to templates (a render must not depend on when it runs): pass it in a variable';

function createEngine(format: MergeTagFormat): Liquid {
  const engine = new Liquid({
    strictVariables: true,
    strictFilters: true,
    // Lets `| default:` and conditions (if, unless, case, assign) read a missing variable as nil instead of failing.
    lenientIf: true,
    ownPropertyOnly: true,
    catchAllErrors: true,
    parseLimit: MERGE_TAG_LIMITS.parseCharacters,
    renderLimit: MERGE_TAG_LIMITS.renderMilliseconds,
    memoryLimit: MERGE_TAG_LIMITS.memory,
    // Dates render the same on every machine.
    timezoneOffset: 0,
    locale: 'en-US',
    ...(format === 'html' && { outputEscape: 'escape' as const }),
  });
  // No file system: the tags that read other templates fail the parse, so no path is ever looked up.
  for (const name of FILE_TAGS) {
    engine.registerTag(name, {
      parse() {
        throw new Error(`tag "${name}" is not available: a template cannot read other files`);
      },
      render() {},
    });
  }
  // Same variables, same bytes: no random picks, no clock.
  engine.unregisterFilter('sample');
  for (const name of DATE_FILTERS) {
    const original = engine.filters[name] as FilterHandler;
    engine.registerFilter(name, function (value: unknown, ...args: unknown[]) {
      if (typeof value === 'string' && NOW.has(value)) throw new Error(CURRENT_TIME);
      return original.call(this, value, ...args);
    });
  }
  if (format === 'html') {
    // Output already escaped by the author is not escaped a second time (the automatic escape skips `raw` filters).
    for (const name of ['escape', 'escape_once', 'xml_escape']) {
      engine.registerFilter(name, { handler: engine.filters[name] as FilterHandler, raw: true });
    }
  }
  return engine;
}

const engines: Record<MergeTagFormat, Liquid> = { html: createEngine('html'), text: createEngine('text') };

type Position = readonly [line: number, column: number];

function positionOf(token: Token | undefined): Position {
  const [line = 1, column = 1] = token?.getPosition() ?? [];
  return [line, column];
}

/** Liquid's errors, unwrapped from the lists catchAllErrors gathers them in. */
function leafErrors(error: unknown): unknown[] {
  const nested = (error as { errors?: unknown[] } | undefined)?.errors;
  return Array.isArray(nested) ? nested.flatMap(leafErrors) : [error];
}

const LIMIT_MESSAGES: Record<string, string> = {
  'template render limit exceeded': `rendering took longer than the render limit (${MERGE_TAG_LIMITS.renderMilliseconds} ms)`,
  'memory alloc limit exceeded': `rendering built more than the memory limit allows (${MERGE_TAG_LIMITS.memory.toLocaleString('en-US')} elements)`,
};

function problemOf(error: unknown): TemplateProblem {
  // A limit reached between two templates of the top level comes unwrapped, without a position.
  const liquid = LiquidError.is(error) ? error : undefined;
  const [line, column] = positionOf(liquid?.token);
  const thrown = liquid?.originalError ?? error;
  const message = (thrown instanceof Error ? thrown.message : String(thrown)).replace(/, line:\d+, col:\d+$/, '');
  return { line, column, message: LIMIT_MESSAGES[message] ?? message };
}

/** Every argument a template evaluates, and whether liquid evaluates it leniently (a missing variable reads as nil). */
function* argumentsOf(templates: Template[]): Generator<{ argument: Value | Token; lenient: boolean }> {
  for (const template of templates) {
    const condition = template instanceof IfTag || template instanceof UnlessTag || template instanceof CaseTag || template instanceof AssignTag;
    for (const argument of template.arguments?.() ?? []) {
      const lenient = condition || (argument instanceof Value && argument.filters[0]?.name === 'default');
      yield { argument, lenient };
    }
    if (template.children) yield* argumentsOf(toValueSync(template.children(false, true)));
  }
}

const positionKey = ([line, column]: readonly number[]) => `${line}:${column}`;

/**
 * What static reading can tell: the top-level names the template reads from its variables, each marked `hasDefault`
 * when every read of it is lenient, and the literal `"now" | date` a render would refuse.
 */
function inspect(parsed: Template[]): { variables: TemplateVariable[]; problems: TemplateProblem[] } {
  const lenientReads = new Set<string>();
  const problems: TemplateProblem[] = [];
  for (const { argument, lenient } of argumentsOf(parsed)) {
    const tokens = argument instanceof Value ? argument.initial.postfix : [argument];
    if (lenient) for (const token of tokens) if (TypeGuards.isPropertyAccessToken(token)) lenientReads.add(positionKey(token.getPosition()));
    const [only] = tokens;
    if (argument instanceof Value && tokens.length === 1 && TypeGuards.isQuotedToken(only) && NOW.has(only.content)) {
      if (argument.filters.some((filter) => DATE_FILTERS.includes(filter.name))) {
        const [line, column] = positionOf(only);
        problems.push({ line, column, message: CURRENT_TIME });
      }
    }
  }
  const { globals } = analyzeSync(parsed, { partials: false });
  const variables = Object.entries(globals).map(([name, reads]) => ({
    name,
    hasDefault: reads.every((read) => lenientReads.has(positionKey([read.location.row, read.location.col]))),
  }));
  return { variables, problems };
}

function parseUncached(source: string, format: MergeTagFormat): ParseOutcome {
  let parsed: Template[];
  try {
    parsed = engines[format].parse(source);
  } catch (error) {
    return { ok: false, problems: leafErrors(error).map(problemOf) };
  }
  const { variables, problems } = inspect(parsed);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, template: { format, variables, parsed } };
}

// The same few templates render for many recipients: parses are kept, oldest dropped first, bounded in count and size.
const CACHE_ENTRIES = 2_000;
const CACHE_CHARACTERS = 8_000_000;
const parseCache = new Map<string, ParseOutcome>();
let cachedCharacters = 0;

/** Parses a template text once (then from a bounded cache): the template, or every problem liquid found, with its position. */
export function parseTemplate(source: string, format: MergeTagFormat): ParseOutcome {
  const key = `${format}:${source}`;
  const hit = parseCache.get(key);
  if (hit) {
    parseCache.delete(key);
    parseCache.set(key, hit);
    return hit;
  }
  const outcome = parseUncached(source, format);
  parseCache.set(key, outcome);
  cachedCharacters += key.length;
  for (const oldest of parseCache.keys()) {
    if (parseCache.size <= CACHE_ENTRIES && cachedCharacters <= CACHE_CHARACTERS) break;
    parseCache.delete(oldest);
    cachedCharacters -= oldest.length;
  }
  return outcome;
}

/** The variables of several texts (a subject and a body …) in order of first appearance; a default must hold in each. */
export function mergeVariables(templates: readonly MergeTemplate[]): TemplateVariable[] {
  const merged = new Map<string, TemplateVariable>();
  for (const variable of templates.flatMap((template) => template.variables)) {
    const seen = merged.get(variable.name);
    merged.set(variable.name, { name: variable.name, hasDefault: (seen?.hasDefault ?? true) && variable.hasDefault });
  }
  return [...merged.values()];
}

function renderOnce(template: MergeTemplate, variables: Record<string, unknown>, strict: boolean): RenderOutcome {
  let text: string;
  try {
    // A copy: `increment` and `decrement` write into the scope they are given.
    text = engines[template.format].renderSync(template.parsed, { ...variables }, { strictVariables: strict }) as string;
  } catch (error) {
    const errors = leafErrors(error);
    const failure = errors.find((leaf) => !(leaf instanceof UndefinedVariableError));
    if (failure !== undefined) throw new MergeTagRenderError(problemOf(failure));
    const missing = errors.map((leaf) => (leaf as UndefinedVariableError).token.getText());
    return { ok: false, missing: [...new Set(missing)] };
  }
  if (text.length > MERGE_TAG_LIMITS.renderedCharacters) {
    throw new MergeTagRenderError({
      line: 1,
      column: 1,
      message: `renders to more than ${MERGE_TAG_LIMITS.renderedCharacters.toLocaleString('en-US')} characters`,
    });
  }
  return { ok: true, text };
}

/**
 * Renders a parsed template with the variables given: the text, or every missing variable named as the template
 * writes it (`first_name`, `order.total`), in order of appearance. Throws MergeTagRenderError when a limit stops it.
 */
export function renderTemplate(template: MergeTemplate, variables: Record<string, unknown>): RenderOutcome {
  return renderOnce(template, variables, true);
}

/**
 * One piece of a parsed template (an output tag of `template.parsed`) rendered alone, as it renders within the whole
 * when no tag writes to the scope; undefined when it fails.
 */
export function renderPiece(template: MergeTemplate, piece: Template, variables: Record<string, unknown>): string | undefined {
  try {
    return engines[template.format].renderSync([piece], { ...variables }) as string;
  } catch {
    return undefined;
  }
}

/** What a render can show without the missing variables (each rendered empty), and their names. */
export function previewTemplate(template: MergeTemplate, variables: Record<string, unknown>): { text: string; missing: string[] } {
  const strict = renderOnce(template, variables, true);
  if (strict.ok) return { text: strict.text, missing: [] };
  const lenient = renderOnce(template, variables, false);
  return { text: lenient.ok ? lenient.text : '', missing: strict.missing };
}
