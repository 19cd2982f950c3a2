// WhatsApp template routes: a project's registry listed, written by hand, and synchronised from its business account.
import { z } from 'zod';
import { WHATSAPP_TEMPLATE_CATEGORIES, WHATSAPP_TEMPLATE_STATUSES } from '../../db/schema.js';
import { projectOf } from '../../http/access.js';
import { commonErrors, errorEnvelope, paginated, paginationQuery, timestamp } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { WhatsAppTemplateService } from './whatsapp-template.service.js';

const tags = ['WhatsApp templates'];
const projectParams = z.object({ id: z.string() });
const templateParams = z.object({ id: z.string(), templateId: z.string() });

const category = z.enum(WHATSAPP_TEMPLATE_CATEGORIES).describe("Meta's category: MARKETING, UTILITY or AUTHENTICATION");
const status = z.enum(WHATSAPP_TEMPLATE_STATUSES).describe("Meta's review status: only APPROVED templates are sent (else `template_not_approved`)");
const components = z
  .array(z.record(z.string(), z.unknown()))
  .max(20)
  .describe("The template's components as Meta describes them (HEADER, BODY, FOOTER, BUTTONS), for reference; a send's parameters are its own");

const whatsappTemplate = z
  .object({
    id: z.string(),
    projectId: z.string(),
    name: z.string(),
    language: z.string().describe("Meta's language code, e.g. en_US"),
    category,
    status,
    components,
    source: z.enum(['provider', 'manual']).describe('`provider`: read from the business account by a sync; `manual`: written through this API'),
    providerTemplateId: z
      .string()
      .nullable()
      .describe("Meta's id of a synchronised template; for a project sending through Twilio, the template's Content SID (HX…), which a send goes by"),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'WhatsAppTemplate' });

const contentSid = z
  .string()
  .regex(/^HX[0-9a-f]{32}$/, 'must be a Twilio Content SID (HX…)')
  .describe("For a project sending through Twilio: the template's Content SID (HX…) in Twilio's Content Template Builder");

const REGISTRY_NOTE =
  'A project keeps one template per name and language. POST /projects/{id}/whatsapp-templates/sync reads them from the ' +
  'WhatsApp Business Account (`GET /{wabaId}/message_templates`); self-hosted setups without it may write them here. ' +
  'A sync replaces what it reads (a hand-written row of the same name and language included) and removes the ' +
  "synchronised rows Meta no longer lists; hand-written rows of other names stay. POST /transactional/whatsapp sends a " +
  'template by name only when its row here is APPROVED. A project sending through Twilio has no sync: its templates ' +
  "are written here, each with its Twilio Content SID as `providerTemplateId` (a send of a template without one " +
  'answers `template_not_found`). A test key may list and read the registry but not change it: creating, changing, ' +
  'deleting or synchronising with one → 403 `test_key_forbidden`.';

export async function whatsappTemplateRoutes(app: App, templates: WhatsAppTemplateService) {
  app.get(
    '/projects/:id/whatsapp-templates',
    {
      config: { access: { auth: 'project', project: 'params.id' } },
      schema: {
        tags,
        summary: "The project's WhatsApp templates, by name and language",
        description: REGISTRY_NOTE,
        params: projectParams,
        querystring: z.strictObject({ ...paginationQuery, name: z.string().min(1).max(512).optional().describe('Only templates of this name') }),
        response: { 200: paginated(whatsappTemplate), ...commonErrors },
      },
    },
    (request) => templates.list(projectOf(request), request.query.page, request.query.pageSize, request.query.name),
  );

  app.post(
    '/projects/:id/whatsapp-templates',
    {
      config: { access: { auth: 'project', project: 'params.id' } },
      schema: {
        tags,
        summary: 'Record a WhatsApp template by hand (self-hosted setups)',
        description: `${REGISTRY_NOTE} A second template of the same name and language → 409 \`template_exists\`.`,
        params: projectParams,
        body: z.strictObject({
          name: z.string().regex(/^[a-z0-9_]{1,512}$/, 'must be lower-case letters, digits and underscores, as Meta names templates'),
          language: z.string().regex(/^[a-z]{2,3}(_[A-Za-z0-9]{2,8})?$/, 'must be a Meta language code such as en or en_US'),
          category,
          status,
          components: components.optional(),
          providerTemplateId: contentSid.optional(),
        }),
        response: { 201: whatsappTemplate, ...commonErrors, 409: errorEnvelope },
      },
    },
    async (request, reply) => reply.status(201).send(await templates.create(projectOf(request), request.body)),
  );

  app.get(
    '/projects/:id/whatsapp-templates/:templateId',
    {
      config: { access: { auth: 'project', project: 'params.id' } },
      schema: { tags, summary: 'One WhatsApp template', params: templateParams, response: { 200: whatsappTemplate, ...commonErrors } },
    },
    (request) => templates.get(projectOf(request), request.params.templateId),
  );

  app.patch(
    '/projects/:id/whatsapp-templates/:templateId',
    {
      config: { access: { auth: 'project', project: 'params.id' } },
      schema: {
        tags,
        summary: "Change a template's category, status, components or Content SID",
        description: 'A synchronised template is overwritten again by the next sync.',
        params: templateParams,
        body: z.strictObject({
          category: category.optional(),
          status: status.optional(),
          components: components.optional(),
          providerTemplateId: contentSid.nullable().optional(),
        }),
        response: { 200: whatsappTemplate, ...commonErrors },
      },
    },
    (request) => templates.update(projectOf(request), request.params.templateId, request.body),
  );

  app.delete(
    '/projects/:id/whatsapp-templates/:templateId',
    {
      config: { access: { auth: 'project', project: 'params.id' } },
      schema: { tags, summary: 'Delete a WhatsApp template from the registry', params: templateParams, response: { 204: z.null(), ...commonErrors } },
    },
    async (request, reply) => {
      await templates.delete(projectOf(request), request.params.templateId);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/projects/:id/whatsapp-templates/sync',
    {
      config: { access: { auth: 'project', project: 'params.id' } },
      schema: {
        tags,
        summary: "Synchronise the registry from the project's WhatsApp Business Account",
        description: `${REGISTRY_NOTE} Without a WhatsApp provider → 422 \`provider_not_configured\`; Meta refusing → 502 \`provider_error\` quoting it.`,
        params: projectParams,
        response: {
          200: z.object({ synced: z.number().int().describe('Templates read and written'), removed: z.number().int().describe('Synchronised templates Meta no longer lists, removed') }),
          ...commonErrors,
          502: errorEnvelope,
        },
      },
    },
    (request) => templates.sync(projectOf(request)),
  );
}
