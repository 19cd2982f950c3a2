// Projects of the x-org-id organization (spec 4.2), plus the one project an API key opens.
import { z } from 'zod';
import { organizationOf, projectOf } from '../../http/access.js';
import { commonErrors, domainName, paginated, paginationQuery, timestamp, timezone } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { ProjectService } from './project.service.js';

const localTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a local time HH:mm (00:00 to 23:59)');

/** Frequency cap and quiet hours of one channel; `what` names its messages and `per` its recipient. */
const channelPolicyFields = (what: string, per: string) => ({
  frequencyCap: z
    .strictObject({
      max: z.number().int().min(1).max(1000),
      windowSeconds: z.number().int().min(60).max(30 * 24 * 3600),
    })
    .nullable()
    .optional()
    .describe(`At most \`max\` ${what} per ${per} in any \`windowSeconds\` (60 s to 30 days); null: no cap`),
  quietHours: z
    .strictObject({ start: localTime, end: localTime })
    .refine((q) => q.start !== q.end, { path: ['end'], message: 'must differ from start (set quietHours to null for none)' })
    .nullable()
    .optional()
    .describe(
      `No ${what} from \`start\` to \`end\`, local time of the subscriber (else of settings.timezone, else UTC); may ` +
        'wrap midnight (22:00 to 07:00); null: none',
    ),
});

const addressPolicy = (channel: string) =>
  z
    .strictObject(channelPolicyFields(`${channel} messages`, channel === 'email' ? 'address' : 'phone number'))
    .nullable()
    .optional()
    .describe(`The ${channel} channel's own limits, per address whatever the devices carrying it; null or absent: none`);

const deliveryPolicy = z
  .strictObject({
    ...channelPolicyFields('pushes', 'subscriber (device)'),
    channels: z
      .strictObject({ email: addressPolicy('email'), sms: addressPolicy('SMS'), whatsapp: addressPolicy('WhatsApp') })
      .optional()
      .describe('Email, SMS and WhatsApp each have their own policy; a push policy never limits them'),
  })
  .describe(
    'Limits every send obeys, transactional or campaign, per channel: the top-level fields are push\'s, `channels` ' +
      'holds the others\'. Replaced as a whole by a PATCH, and applied at once: to the next transactional send and to ' +
      'every campaign message sent after the PATCH answers',
  );

const vapidSubject = z
  .string()
  .trim()
  .max(255)
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' || (url.protocol === 'mailto:' && /^[^@\s]+@[^@\s]+$/.test(url.pathname));
    } catch {
      return false;
    }
  }, 'must be a mailto: address or an https: URL');

const origin = z
  .string()
  .trim()
  .max(255)
  .transform((value, context) => {
    try {
      const url = new URL(value);
      // An origin and nothing else: no path, query, fragment or credentials.
      if ((url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value.replace(/\/$/, '').toLowerCase()) return url.origin;
    } catch {
      // reported below
    }
    context.addIssue({ code: 'custom', message: 'must be an origin such as https://www.example.com (scheme, host and port only)' });
    return z.NEVER;
  });

const settingsInput = z
  .strictObject({
    timezone: timezone.optional().describe('Default time zone for subscribers whose own is unknown'),
    deliveryPolicy: deliveryPolicy.optional(),
    vapidSubject: vapidSubject
      .optional()
      .describe("VAPID contact (mailto: or https:) push services see; default: the instance's VAPID_SUBJECT"),
    identityVerification: z
      .boolean()
      .optional()
      .describe(
        'Recommended. When true, POST /subscribers/identify with a publishable key must carry externalIdHash, the hex ' +
          'HMAC-SHA256 of the externalId under the identity secret (GET /projects/{id}/identity-secret), computed by ' +
          'your server: a visitor cannot then claim another user. Default false',
      ),
    allowedOrigins: z
      .array(origin)
      .max(100)
      .optional()
      .describe(
        'Origins (scheme://host[:port]) whose pages may call the publishable routes with an API key; an empty list ' +
          '(the default) allows any origin. Another Origin → 403 origin_not_allowed',
      ),
  })
  .describe('Project settings; later capabilities add keys here');

const project = z
  .object({
    id: z.string(),
    organizationId: z.string(),
    name: z.string(),
    emailConfig: z.object({
      domain: z
        .string()
        .nullable()
        .describe('The verified sending domain: the one chosen with PATCH while verified, else the first verified domain by name; null without one'),
    }),
    settings: z.record(z.string(), z.unknown()),
    vapidPublicKey: z.string().nullable().describe('VAPID public key (base64url) for web push subscriptions; null without a push configuration'),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Project' });

const projectInput = z.strictObject({
  name: z.string().trim().min(1).max(200),
  emailConfig: z
    .strictObject({ domain: domainName.nullable() })
    .optional()
    .describe('PATCH: one of the project\'s verified sending domains (another → 422), or null to clear the choice'),
  settings: settingsInput.optional(),
});

const idParams = z.object({ id: z.string() });

export async function projectRoutes(app: App, projects: ProjectService) {
  app.get(
    '/projects',
    {
      config: { access: { auth: 'organization' } },
      schema: {
        tags: ['Projects'],
        summary: 'Projects of the x-org-id organization',
        querystring: z.strictObject(paginationQuery),
        response: { 200: paginated(project), ...commonErrors },
      },
    },
    (request) => projects.list(organizationOf(request), request.query.page, request.query.pageSize),
  );

  app.post(
    '/projects',
    {
      config: { access: { auth: 'organization', minRole: 'ADMIN' } },
      schema: {
        tags: ['Projects'],
        summary: 'Create a project (OWNER or ADMIN); it gets its own VAPID key pair',
        body: projectInput,
        response: { 201: project, ...commonErrors },
      },
    },
    async (request, reply) => reply.status(201).send(await projects.create(organizationOf(request).organizationId, request.body)),
  );

  app.get(
    '/projects/:id',
    {
      config: { access: { auth: 'project', project: 'params.id' } },
      schema: { tags: ['Projects'], summary: 'One project', params: idParams, response: { 200: project, ...commonErrors } },
    },
    (request) => projects.get(projectOf(request)),
  );

  app.get(
    '/projects/:id/push-config',
    {
      config: { access: { auth: 'project', project: 'params.id', publishable: true } },
      schema: {
        tags: ['Projects'],
        summary: 'What the browser SDK needs to subscribe to push: the project id and its VAPID public key',
        params: idParams,
        response: {
          200: z.object({
            projectId: z.string(),
            vapidPublicKey: z.string().describe('applicationServerKey for PushManager.subscribe (base64url)'),
          }),
          ...commonErrors,
        },
      },
    },
    (request) => projects.pushConfig(projectOf(request)),
  );

  const secretAccess = { auth: 'project', credentials: 'jwt', project: 'params.id', minRole: 'ADMIN' } as const;
  const secretResponse = {
    200: z.object({
      identitySecret: z.string().describe('Key of the HMAC-SHA256 your server computes over an externalId (hrd_ids_…)'),
    }),
    ...commonErrors,
  };

  app.get(
    '/projects/:id/identity-secret',
    {
      config: { access: secretAccess },
      schema: {
        tags: ['Projects'],
        summary: "The project's identity verification secret (OWNER or ADMIN)",
        description:
          'Keep it on your server: it computes externalIdHash = hex(HMAC-SHA256(identitySecret, externalId)) for the ' +
          'signed-in user and hands it to the browser SDK. Readable again at any time, like the secret of Intercom or ' +
          'OneSignal identity verification; rotate it if it leaks.',
        params: idParams,
        response: secretResponse,
      },
    },
    (request) => projects.identitySecret(projectOf(request)),
  );

  app.post(
    '/projects/:id/identity-secret/rotate',
    {
      config: { access: secretAccess },
      schema: {
        tags: ['Projects'],
        summary: 'Replace the identity verification secret (OWNER or ADMIN); hashes made with the old one fail from now on',
        params: idParams,
        response: secretResponse,
      },
    },
    (request) => projects.rotateIdentitySecret(projectOf(request)),
  );

  app.patch(
    '/projects/:id',
    {
      config: { access: { auth: 'project', credentials: 'jwt', project: 'params.id', minRole: 'ADMIN' } },
      schema: {
        tags: ['Projects'],
        summary: 'Update a project (OWNER or ADMIN)',
        description: 'Fields left out are kept; `settings` keys merge into the stored settings.',
        params: idParams,
        body: projectInput.partial(),
        response: { 200: project, ...commonErrors },
      },
    },
    (request) => projects.update(projectOf(request), request.body),
  );

  app.delete(
    '/projects/:id',
    {
      config: { access: { auth: 'project', credentials: 'jwt', project: 'params.id', minRole: 'ADMIN' } },
      schema: {
        tags: ['Projects'],
        summary: 'Delete a project and everything in it (OWNER or ADMIN)',
        params: idParams,
        response: { 204: z.null(), ...commonErrors },
      },
    },
    async (request, reply) => {
      await projects.remove(projectOf(request));
      return reply.status(204).send(null);
    },
  );
}
