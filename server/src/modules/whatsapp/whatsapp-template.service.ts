// The WhatsApp template registry: synchronised from the project's business account, editable by hand, and what a send asks.
import type { Db } from '../../db/database.js';
import { WHATSAPP_TEMPLATE_CATEGORIES, WHATSAPP_TEMPLATE_STATUSES } from '../../db/schema.js';
import { AppError, forbidden, notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import type { ChannelConfigService } from '../channels/index.js';
import type { ProjectScope } from '../tenancy.js';
import * as repo from './whatsapp-template.repository.js';

type Category = (typeof WHATSAPP_TEMPLATE_CATEGORIES)[number];
type Status = (typeof WHATSAPP_TEMPLATE_STATUSES)[number];

/** A template as the business account lists it (`delivery/channels/whatsapp/cloud-api.ts`). */
export interface ListedTemplate {
  id: string | undefined;
  name: string;
  language: string;
  category: string;
  status: string;
  components: Record<string, unknown>[];
}

/** Reads every template of a business account with the project's token; a refusal is thrown with what Meta said. */
export type ListProviderTemplates = (account: { wabaId: string; accessToken: string }) => Promise<ListedTemplate[]>;

export interface WhatsAppTemplateInput {
  name: string;
  language: string;
  category: Category;
  status: Status;
  components?: Record<string, unknown>[] | undefined;
  /** For a project sending through Twilio: the template's Content SID (HX…). */
  providerTemplateId?: string | undefined;
}

export interface WhatsAppTemplateView {
  id: string;
  projectId: string;
  name: string;
  language: string;
  category: Category;
  status: Status;
  components: Record<string, unknown>[];
  source: 'provider' | 'manual';
  providerTemplateId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** What a send by name finds: the template to send, or why not. */
export type TemplateChoice =
  | { ok: true; name: string; language: string; providerTemplateId: string | null }
  | { ok: false; reason: 'template_not_found' | 'template_not_approved' };

const view = ({ createdAt, updatedAt, ...row }: repo.WhatsAppTemplateRow): WhatsAppTemplateView => ({
  ...row,
  createdAt: createdAt.toISOString(),
  updatedAt: updatedAt.toISOString(),
});

const oneOf = <T extends string>(values: readonly T[], value: string, fallback: T): T => ((values as readonly string[]).includes(value) ? (value as T) : fallback);

/**
 * The registry is one per project and every live WhatsApp send reads it, so a test key (the sandbox's) may read it but
 * not change it, as it may not change the sending domains.
 */
function refuseTestKey(scope: ProjectScope) {
  if (scope.sandbox) throw forbidden('A test key cannot change WhatsApp templates: use a live key or the dashboard', 'test_key_forbidden');
}

export class WhatsAppTemplateService {
  constructor(
    private readonly db: Db,
    private readonly channels: ChannelConfigService,
    private readonly listProviderTemplates: ListProviderTemplates,
  ) {}

  async list(scope: ProjectScope, page: number, pageSize: number, name?: string) {
    const { rows, total } = await repo.listTemplates(this.db, scope.projectId, { limit: pageSize, offset: (page - 1) * pageSize, name });
    return { data: rows.map(view), page, pageSize, total };
  }

  async get(scope: ProjectScope, id: string): Promise<WhatsAppTemplateView> {
    const row = await repo.findTemplate(this.db, scope.projectId, id);
    if (!row) throw notFound('WhatsApp template');
    return view(row);
  }

  async create(scope: ProjectScope, input: WhatsAppTemplateInput): Promise<WhatsAppTemplateView> {
    refuseTestKey(scope);
    const row = await repo.insertTemplate(this.db, {
      id: newId('wat'),
      projectId: scope.projectId,
      ...input,
      components: input.components ?? [],
      providerTemplateId: input.providerTemplateId ?? null,
      source: 'manual',
    });
    if (!row) throw new AppError(409, 'template_exists', `The project already has a template ${input.name} in ${input.language}`);
    return view(row);
  }

  async update(
    scope: ProjectScope,
    id: string,
    fields: Partial<Pick<WhatsAppTemplateInput, 'category' | 'status' | 'components'>> & { providerTemplateId?: string | null | undefined },
  ): Promise<WhatsAppTemplateView> {
    refuseTestKey(scope);
    const row = await repo.updateTemplate(this.db, scope.projectId, id, fields);
    if (!row) throw notFound('WhatsApp template');
    return view(row);
  }

  async delete(scope: ProjectScope, id: string): Promise<void> {
    refuseTestKey(scope);
    if (!(await repo.deleteTemplate(this.db, scope.projectId, id))) throw notFound('WhatsApp template');
  }

  /**
   * Reads the business account's templates and makes the registry match: 422 `provider_not_configured` without a
   * Meta configuration (a project sending through Twilio writes its templates by hand), 502 `provider_error` when
   * Meta refuses (its message quoted).
   */
  async sync(scope: ProjectScope): Promise<{ synced: number; removed: number }> {
    refuseTestKey(scope);
    const config = await this.channels.opened(scope.projectId, 'whatsapp');
    if (config?.provider === 'twilio') {
      throw new AppError(422, 'provider_not_configured', "The project's WhatsApp goes through Twilio: write its templates here by hand, each with its Content SID (providerTemplateId)");
    }
    if (config?.provider !== 'meta') throw new AppError(422, 'provider_not_configured', 'The project has no WhatsApp provider: PUT /projects/{id}/channels/whatsapp first');
    let listed: ListedTemplate[];
    try {
      listed = await this.listProviderTemplates({ wabaId: String(config.settings.wabaId), accessToken: config.credentials.accessToken ?? '' });
    } catch (error) {
      throw new AppError(502, 'provider_error', (error as Error).message);
    }
    // One row per name and language, whatever the provider repeated.
    const unique = new Map(listed.map((t) => [`${t.name}\u0000${t.language}`, t]));
    return repo.replaceProviderTemplates(
      this.db,
      scope.projectId,
      [...unique.values()].map((t) => ({
        id: newId('wat'),
        projectId: scope.projectId,
        name: t.name,
        language: t.language,
        category: oneOf(WHATSAPP_TEMPLATE_CATEGORIES, t.category, 'UTILITY'),
        // A status Herald does not know is not one that may be sent.
        status: oneOf(WHATSAPP_TEMPLATE_STATUSES, t.status, 'PENDING'),
        components: t.components,
        source: 'provider' as const,
        providerTemplateId: t.id ?? null,
      })),
    );
  }

  /**
   * The template a send names: that language, or without one the name's approved template (the first language in
   * order) — `template_not_found` when the project has none of that name (and language), `template_not_approved`
   * when it is not APPROVED.
   */
  async choose(projectId: string, name: string, language: string | undefined): Promise<TemplateChoice> {
    const named = await repo.findTemplatesNamed(this.db, projectId, name);
    const row = language === undefined ? named[0] : named.find((t) => t.language === language);
    if (!row) return { ok: false, reason: 'template_not_found' };
    if (row.status !== 'APPROVED') return { ok: false, reason: 'template_not_approved' };
    return { ok: true, name: row.name, language: row.language, providerTemplateId: row.providerTemplateId };
  }
}
