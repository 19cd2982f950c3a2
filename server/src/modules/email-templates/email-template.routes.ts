// Email template routes: saved templates CRUD, previews of saved and unsaved templates with merge-tag variables.
import { z } from 'zod';
import { projectOf, reachOf } from '../../http/access.js';
import { commonErrors, paginated, paginationQuery, timestamp } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { MERGE_TAG_LIMITS } from '../../shared/merge-tags.js';
import { emailDesign } from './email-design.schemas.js';
import { html, MERGE_TAGS_NOTE, name, preheader, subject, text } from './email-template.schemas.js';
import type { EmailTemplateService } from './email-template.service.js';

const tags = ['Email templates'];

// The largest html and text, JSON-escaped, with room for the rest of the body.
const BODY_LIMIT = 2 * 1024 * 1024;

const variableValues = z
  .record(z.string(), z.unknown())
  .describe('Values of the template\'s variables: any JSON (objects for `{{ order.total }}`, arrays for `{% for %}`)');

const variable = z
  .object({
    name: z.string().describe('A top-level name the template reads, e.g. `first_name` or `order` for `{{ order.total }}`'),
    hasDefault: z
      .boolean()
      .describe('Every use gives a default (`| default:`) or only tests it (`if`, `unless`, `case`): rendering never fails without it'),
  })
  .meta({ id: 'EmailTemplateVariable' });

const summaryFields = {
  id: z.string(),
  projectId: z.string(),
  name: z.string(),
  subject: z.string(),
  preheader: z.string().nullable(),
  variables: z.array(variable).describe('The variables subject, preheader, html and text read, in order of first appearance'),
  sandbox: z.boolean().describe('Saved with a test key: test keys see and change only these; only sandbox sends render them'),
  createdAt: timestamp,
  updatedAt: timestamp,
};

const design = emailDesign.nullable().describe('The visual editor\'s document `html` was rendered from; null: HTML written by hand');

const emailTemplate = z
  .object({ ...summaryFields, html: z.string(), text: z.string().nullable().describe('null: generated from the rendered HTML'), design })
  .meta({
    id: 'EmailTemplate',
    description:
      'A template belongs to an environment, like segments: a test key saves sandbox templates and sees and changes only ' +
      'those (another template is 404); a live key sees both environments of its project; dashboard users every ' +
      'template of their organization. A send renders a template of its own environment only.',
  });
const emailTemplateSummary = z.object(summaryFields).meta({ id: 'EmailTemplateSummary', description: 'A template without its html and text' });

const renderedFields = {
  subject: z.string().describe('One line: line breaks in values become spaces'),
  html: z.string(),
  text: z.string().describe("The template's text part, or generated from the rendered HTML (links as `text [url]`)"),
  preheader: z.string().nullable(),
  missing: z.array(z.string()).describe('Variables the render needed and did not get, as the template writes them (`first_name`, `order.total`); each rendered empty'),
};
const emailPreview = z.object(renderedFields).meta({ id: 'EmailPreview' });

const idParams = z.object({ id: z.string() });
const renderFailure = 'A render limit or a failing filter stopped a part: 422 `template_render_failed` naming it.';

export async function emailTemplateRoutes(app: App, templates: EmailTemplateService) {
  app.post(
    '/email-templates',
    {
      bodyLimit: BODY_LIMIT,
      config: { access: { auth: 'project', project: 'body.projectId' } },
      schema: {
        tags,
        summary: 'Save an email template',
        description: MERGE_TAGS_NOTE,
        body: z.strictObject({ projectId: z.string(), name, subject, html, text: text.optional(), preheader: preheader.optional(), design: design.optional() }),
        response: { 201: emailTemplate, ...commonErrors },
      },
    },
    async (request, reply) => {
      const { projectId: _, ...input } = request.body;
      return reply.status(201).send(await templates.create(projectOf(request), input));
    },
  );

  app.post(
    '/email-templates/preview',
    {
      bodyLimit: BODY_LIMIT,
      config: { access: { auth: 'project', project: 'body.projectId', minRole: 'VIEWER' } },
      schema: {
        tags,
        summary: 'Render an unsaved template with variables (an editor\'s live preview); nothing is stored',
        description: `Checked as a save would be (422 naming the part), then rendered as POST /email-templates/{id}/preview. ${renderFailure}`,
        body: z.strictObject({
          projectId: z.string(),
          subject,
          html,
          text: text.optional(),
          preheader: preheader.optional(),
          variables: variableValues.default({}),
        }),
        response: {
          200: z.object({ ...renderedFields, variables: z.array(variable).describe('The variables the template reads') }),
          ...commonErrors,
        },
      },
    },
    (request) => {
      const { projectId: _, variables, ...content } = request.body;
      return templates.previewContent(content, variables);
    },
  );

  app.get(
    '/email-templates/project/:projectId',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: 'Email templates of a project, newest first, without their bodies (a test key lists only sandbox templates)',
        params: z.object({ projectId: z.string() }),
        querystring: z.strictObject({
          ...paginationQuery,
          q: z.string().trim().min(1).max(200).optional().describe('Only templates whose name contains this (case-insensitive)'),
        }),
        response: { 200: paginated(emailTemplateSummary), ...commonErrors },
      },
    },
    (request) => templates.list(projectOf(request), request.query),
  );

  app.get(
    '/email-templates/:id',
    {
      config: { access: { auth: 'project' } },
      schema: { tags, summary: 'One email template', params: idParams, response: { 200: emailTemplate, ...commonErrors } },
    },
    (request) => templates.get(reachOf(request), request.params.id),
  );

  app.patch(
    '/email-templates/:id',
    {
      bodyLimit: BODY_LIMIT,
      config: { access: { auth: 'project' } },
      schema: {
        tags,
        summary: 'Change an email template: the fields given (null clears text, preheader or design)',
        description: `The template as changed is checked as a save is, and its variables listed again. ${MERGE_TAGS_NOTE}`,
        params: idParams,
        body: z.strictObject({
          name: name.optional(),
          subject: subject.optional(),
          html: html.optional(),
          text: text.optional(),
          preheader: preheader.optional(),
          design: design.optional().describe('The visual editor\'s document (null clears it); left out while `html` changes, it is cleared'),
        }),
        response: { 200: emailTemplate, ...commonErrors },
      },
    },
    (request) => templates.update(reachOf(request), request.params.id, request.body),
  );

  app.delete(
    '/email-templates/:id',
    {
      config: { access: { auth: 'project' } },
      schema: { tags, summary: 'Delete an email template', params: idParams, response: { 204: z.null(), ...commonErrors } },
    },
    async (request, reply) => {
      await templates.remove(reachOf(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/email-templates/:id/preview',
    {
      config: { access: { auth: 'project', minRole: 'VIEWER' } },
      schema: {
        tags,
        summary: 'Render a saved template with variables: what it shows, and the variables it is missing',
        description:
          'A preview renders what it can: each missing variable renders empty and is named in `missing` (a send would ' +
          `answer template_variables_missing instead). Rendering is bounded (${MERGE_TAG_LIMITS.renderMilliseconds} ms ` +
          `and ${MERGE_TAG_LIMITS.renderedCharacters.toLocaleString('en-US')} characters per part). ${renderFailure}`,
        params: idParams,
        body: z.strictObject({ variables: variableValues.default({}) }),
        response: { 200: emailPreview, ...commonErrors },
      },
    },
    (request) => templates.preview(reachOf(request), request.params.id, request.body.variables),
  );
}
