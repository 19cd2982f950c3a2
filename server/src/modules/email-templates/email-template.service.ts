// Email templates: subject, preheader, HTML and text with merge tags, checked when saved, rendered for previews and sends.
import type { Db } from '../../db/database.js';
import { notifyProjectChange, type ForgetProject } from '../../db/project-changes.js';
import type { EmailTemplateVariable } from '../../db/schema.js';
import { AppError, notFound, validationFailed, type FieldError } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { NotifiedCache } from '../../shared/notified-cache.js';
import {
  MergeTagRenderError,
  mergeVariables,
  parseTemplate,
  previewTemplate,
  renderTemplate,
  type MergeTagFormat,
  type MergeTemplate,
  type TemplateProblem,
} from '../../shared/merge-tags.js';
import { htmlToPlainText, plainTextOf } from '../../shared/plain-text.js';
import type { ProjectScope, Reach } from '../tenancy.js';
import type { EmailDesign } from './email-design.schemas.js';
import * as repo from './email-template.repository.js';

export interface EmailTemplate {
  id: string;
  projectId: string;
  name: string;
  subject: string;
  html: string;
  text: string | null;
  preheader: string | null;
  variables: EmailTemplateVariable[];
  sandbox: boolean;
  /** The visual editor's document `html` was rendered from; null: HTML written by hand. */
  design: EmailDesign | null;
  createdAt: string;
  updatedAt: string;
}

/** A template in a list: everything but its bodies and design. */
export type EmailTemplateSummary = Omit<EmailTemplate, 'html' | 'text' | 'design'>;

/** What a template says, before it is saved: `text` and `preheader` absent or null are none. */
export interface EmailTemplateContent {
  subject: string;
  html: string;
  text?: string | null | undefined;
  preheader?: string | null | undefined;
}

export interface EmailTemplateChange {
  name?: string | undefined;
  subject?: string | undefined;
  html?: string | undefined;
  text?: string | null | undefined;
  preheader?: string | null | undefined;
  design?: EmailDesign | null | undefined;
}

export type Variables = Record<string, unknown>;

/** An email as it goes out: `text` is the template's text part, or generated from the rendered HTML. */
export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
  preheader: string | null;
}

export interface EmailPreview extends RenderedEmail {
  /** The variables the render needed and did not get (rendered empty), as the template writes them. */
  missing: string[];
}

/** The parts of a template in the order their variables are listed; `format` says which are HTML. */
const PARTS = [
  ['subject', 'text'],
  ['preheader', 'text'],
  ['html', 'html'],
  ['text', 'text'],
] as const satisfies readonly (readonly [keyof EmailTemplateContent, MergeTagFormat])[];

export type TemplatePart = (typeof PARTS)[number][0];

/**
 * Why a send could not render its template: spec 7.4's `template_not_found` (no template of the sending project and
 * environment has this id) and `template_variables_missing` (`missing` names them), and Herald's
 * `template_render_failed` (a render limit or a failing filter stopped `field`; `error` says which).
 */
export type TemplateRenderFailure =
  | { reason: 'template_not_found' }
  | { reason: 'template_variables_missing'; missing: string[] }
  | { reason: 'template_render_failed'; field: TemplatePart; error: string };

export type TemplateRender = ({ ok: true } & RenderedEmail) | ({ ok: false } & TemplateRenderFailure);

type Compiled = Partial<Record<TemplatePart, MergeTemplate>>;

const describe = (problem: TemplateProblem) => `line ${problem.line}, column ${problem.column}: ${problem.message}`;

/** Each part parsed, or one 422 detail per part that does not parse, with every problem liquid found in it. */
function compile(content: EmailTemplateContent): { compiled: Compiled; problems: FieldError[] } {
  const compiled: Compiled = {};
  const problems: FieldError[] = [];
  for (const [part, format] of PARTS) {
    const source = content[part];
    if (source === null || source === undefined) continue;
    const outcome = parseTemplate(source, format);
    if (outcome.ok) compiled[part] = outcome.template;
    else problems.push({ field: part, error: outcome.problems.map(describe).join('; ') });
  }
  return { compiled, problems };
}

/** A template to save: parsed, and the variables it reads; 422 naming each part that does not parse. */
function checked(content: EmailTemplateContent): { compiled: Compiled; variables: EmailTemplateVariable[] } {
  const { compiled, problems } = compile(content);
  if (problems.length > 0) throw validationFailed(problems);
  return { compiled, variables: mergeVariables(Object.values(compiled)) };
}

/** A stored template parses (it did when saved); one that no longer does is a server fault. */
function stored(row: repo.EmailTemplateRow): Compiled {
  const { compiled, problems } = compile(row);
  if (problems.length > 0) throw new AppError(500, 'invalid_stored_template', `Email template ${row.id} no longer parses`);
  return compiled;
}

// A variable's line breaks would start new header lines: a subject is one line whatever the values hold.
const oneLine = (subject: string) => subject.replace(/\s*[\r\n]+\s*/g, ' ');

/** The parts rendered as an email; without a text part, `plain` makes it from the HTML. */
function assemble(rendered: Partial<Record<TemplatePart, string>>, plain: (html: string) => string = htmlToPlainText): RenderedEmail {
  const html = rendered.html ?? '';
  return {
    subject: oneLine(rendered.subject ?? ''),
    html,
    text: rendered.text ?? plain(html),
    preheader: rendered.preheader ?? null,
  };
}

type PartsRendered<T> = { ok: true; results: Partial<Record<TemplatePart, T>> } | { ok: false; part: TemplatePart; error: MergeTagRenderError };

/** Runs `render` on each part, or names the part a render limit (or a failing filter) stopped. */
function renderParts<T>(compiled: Compiled, render: (template: MergeTemplate) => T): PartsRendered<T> {
  const results: Partial<Record<TemplatePart, T>> = {};
  for (const [part] of PARTS) {
    const template = compiled[part];
    if (!template) continue;
    try {
      results[part] = render(template);
    } catch (error) {
      if (error instanceof MergeTagRenderError) return { ok: false, part, error };
      throw error;
    }
  }
  return { ok: true, results };
}

function preview(compiled: Compiled, variables: Variables): EmailPreview {
  const rendered = renderParts(compiled, (template) => previewTemplate(template, variables));
  if (!rendered.ok) {
    throw new AppError(422, 'template_render_failed', 'The template could not be rendered', [{ field: rendered.part, error: rendered.error.message }]);
  }
  const parts = Object.entries(rendered.results);
  const missing = [...new Set(parts.flatMap(([, result]) => result.missing))];
  return { ...assemble(Object.fromEntries(parts.map(([part, result]) => [part, result.text]))), missing };
}

const toSummary = (row: Omit<repo.EmailTemplateRow, 'html' | 'text' | 'design'>): EmailTemplateSummary => ({
  id: row.id,
  projectId: row.projectId,
  name: row.name,
  subject: row.subject,
  preheader: row.preheader,
  variables: row.variables,
  sandbox: row.sandbox,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const toTemplate = (row: repo.EmailTemplateRow): EmailTemplate => ({ ...toSummary(row), html: row.html, text: row.text, design: row.design as EmailDesign | null });

/** A saved template as sends read it: parsed once. */
interface Sendable {
  projectId: string;
  compiled: Compiled;
}

export class EmailTemplateService {
  /**
   * Templates sends render, by project, environment and id: kept while the delivery engine's listener hears project
   * changes, which every edit and deletion of a template announces.
   */
  private readonly sendable = new NotifiedCache<Sendable>({ maxEntries: 10_000, ttlMs: 30_000 });

  /** `forget`: drops the project's cached rows in this process (others hear the NOTIFY). */
  constructor(
    private readonly db: Db,
    private readonly forget: ForgetProject = () => undefined,
  ) {}

  /** A test key saves a sandbox template; live keys and dashboard users a live one. */
  async create(scope: ProjectScope, input: { name: string; design?: EmailDesign | null | undefined } & EmailTemplateContent): Promise<EmailTemplate> {
    const { variables } = checked(input);
    const row = await repo.insertTemplate(this.db, {
      id: newId('etp'),
      projectId: scope.projectId,
      sandbox: scope.sandbox,
      name: input.name,
      subject: input.subject,
      html: input.html,
      text: input.text ?? null,
      preheader: input.preheader ?? null,
      design: input.design ?? null,
      variables,
    });
    return toTemplate(row);
  }

  async list(scope: ProjectScope, query: { page: number; pageSize: number; q?: string | undefined }) {
    const { page, pageSize } = query;
    const { rows, total } = await repo.listTemplates(this.db, scope, { limit: pageSize, offset: (page - 1) * pageSize, search: query.q });
    return { data: rows.map(toSummary), page, pageSize, total };
  }

  async get(reach: Reach, id: string): Promise<EmailTemplate> {
    const row = await repo.findTemplate(this.db, reach, id);
    if (!row) throw notFound('Email template');
    return toTemplate(row);
  }

  /** A template of the scope's own project and environment, or undefined (an email campaign copies its parts). */
  async find(scope: ProjectScope, id: string): Promise<EmailTemplate | undefined> {
    const row = await repo.findTemplate(this.db, scope, id);
    return row && row.projectId === scope.projectId && row.sandbox === scope.sandbox ? toTemplate(row) : undefined;
  }

  /** Changes what is given (null clears `text` or `preheader`); the whole result must parse, and its variables are listed again. */
  async update(reach: Reach, id: string, change: EmailTemplateChange): Promise<EmailTemplate> {
    const row = await this.db.transaction(async (tx) => {
      const current = await repo.findTemplate(tx, reach, id, true);
      if (!current) return undefined;
      const content = {
        name: change.name ?? current.name,
        subject: change.subject ?? current.subject,
        html: change.html ?? current.html,
        text: change.text === undefined ? current.text : change.text,
        preheader: change.preheader === undefined ? current.preheader : change.preheader,
        // A design describes the HTML it rendered: new HTML without a design of its own leaves none.
        design: change.design !== undefined ? change.design : change.html !== undefined ? null : current.design,
      };
      const updated = await repo.updateTemplate(tx, reach, id, { ...content, variables: checked(content).variables });
      if (updated) await notifyProjectChange(tx, updated.projectId);
      return updated;
    });
    if (!row) throw notFound('Email template');
    this.forget(row.projectId);
    return toTemplate(row);
  }

  async remove(reach: Reach, id: string): Promise<void> {
    const projectId = await this.db.transaction(async (tx) => {
      const deleted = await repo.deleteTemplate(tx, reach, id);
      if (deleted) await notifyProjectChange(tx, deleted);
      return deleted;
    });
    if (!projectId) throw notFound('Email template');
    this.forget(projectId);
  }

  /** After a template of the project changed in this process (others hear of it as a project change). */
  forgetProject(projectId: string): void {
    this.sendable.evictWhere((template) => template.projectId === projectId);
  }

  /** Trusted while the delivery engine's listener is connected (`DeliveryEngine.watchChanges`). */
  setTrusted(trusted: boolean): void {
    this.sendable.setTrusted(trusted);
  }

  /** A saved template rendered with `variables`: what it can show, and the missing variables named. */
  async preview(reach: Reach, id: string, variables: Variables): Promise<EmailPreview> {
    const row = await repo.findTemplate(this.db, reach, id);
    if (!row) throw notFound('Email template');
    return preview(stored(row), variables);
  }

  /** Unsaved content rendered as a preview (an editor's live view), with the variables it reads; 422 if it does not parse. */
  previewContent(content: EmailTemplateContent, variables: Variables): EmailPreview & { variables: EmailTemplateVariable[] } {
    const { compiled, variables: used } = checked(content);
    return { ...preview(compiled, variables), variables: used };
  }

  /**
   * What a send renders (spec 4.8, `templateId` with `variables`): the email, or why not — see TemplateRenderFailure.
   * Only a template of the sender's own project and environment is found: a test key, which may rewrite sandbox
   * templates, never shapes a live email, and a sandbox send never reads a live one. `override.subject` is the send's
   * own subject line, in place of the template's (422 naming `subject` when it does not parse).
   */
  async render(scope: ProjectScope, templateId: string, variables: Variables, override: { subject?: string | undefined } = {}): Promise<TemplateRender> {
    const template = await this.findSendable(scope, templateId);
    if (!template) return { ok: false, reason: 'template_not_found' };
    const compiled = { ...template.compiled };
    if (override.subject !== undefined) {
      // The send's own subject replaces the template's, rendered with the same variables.
      const subject = parseTemplate(override.subject, 'text');
      if (!subject.ok) throw validationFailed([{ field: 'subject', error: subject.problems.map(describe).join('; ') }]);
      compiled.subject = subject.template;
    }
    return renderStrictly(compiled, variables);
  }

  private async findSendable(scope: ProjectScope, id: string): Promise<Sendable | undefined> {
    const key = `${scope.projectId}:${scope.sandbox}:${id}`;
    const version = this.sendable.version();
    const cached = this.sendable.get(key);
    if (cached) return cached;
    const row = await repo.findSendableTemplate(this.db, scope, id);
    if (!row) return undefined;
    const template = { projectId: row.projectId, compiled: stored(row) };
    this.sendable.set(key, template, version);
    return template;
  }

  /**
   * Content a send gives itself rather than a template's (spec 4.8's `htmlContent`), rendered with `variables` as a
   * template is. 422 naming each part that does not parse, by the name `fields` gives it (the request's field).
   */
  renderContent(content: EmailTemplateContent, variables: Variables, fields: Partial<Record<TemplatePart, string>> = {}): Exclude<TemplateRender, { reason: 'template_not_found' }> {
    const { compiled, problems } = compile(content);
    if (problems.length > 0) throw validationFailed(problems.map((problem) => ({ ...problem, field: fields[problem.field as TemplatePart] ?? problem.field })));
    return renderStrictly(compiled, variables);
  }
}

/** Every part rendered with strict variables: the email, or the first part a limit stopped, or every missing variable. */
function renderStrictly(compiled: Compiled, variables: Variables): Exclude<TemplateRender, { reason: 'template_not_found' }> {
  const rendered = renderParts(compiled, (template) => renderTemplate(template, variables));
  if (!rendered.ok) return { ok: false, reason: 'template_render_failed', field: rendered.part, error: rendered.error.message };
  const parts = Object.entries(rendered.results);
  const missing = [...new Set(parts.flatMap(([, outcome]) => (outcome.ok ? [] : outcome.missing)))];
  if (missing.length > 0) return { ok: false, reason: 'template_variables_missing', missing };
  const { html } = compiled;
  const plain = html ? (rendered: string) => plainTextOf(html, variables, rendered) : htmlToPlainText;
  return { ok: true, ...assemble(Object.fromEntries(parts.map(([part, outcome]) => [part, outcome.ok ? outcome.text : ''])), plain) };
}
