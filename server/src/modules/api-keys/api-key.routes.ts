// API key management, a dashboard (JWT) operation for OWNER and ADMIN: create (secret shown once), list, revoke.
import { z } from 'zod';
import { projectOf } from '../../http/access.js';
import { commonErrors, timestamp } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { ApiKeyService } from './api-key.service.js';

const apiKey = z
  .object({
    id: z.string(),
    projectId: z.string(),
    name: z.string(),
    mode: z.enum(['live', 'test']).describe('live keys reach real subscribers; test keys use the sandbox'),
    scope: z
      .enum(['server', 'publishable'])
      .describe(
        'server: every project route, keep it on your servers; publishable: only the routes a browser SDK calls ' +
          '(push config, register, identify, tag, untag, seen, update and read its own subscriber by token), safe to ' +
          'ship in a web page; any other route answers it 403 publishable_key_forbidden',
      ),
    prefix: z.string().describe('hrd_live_ / hrd_test_ (server), hrd_pub_live_ / hrd_pub_test_ (publishable)'),
    lastFour: z.string(),
    createdAt: timestamp,
    lastUsedAt: timestamp.nullable(),
    revokedAt: timestamp.nullable(),
  })
  .meta({ id: 'ApiKey' });

const access = { auth: 'project', credentials: 'jwt', project: 'params.projectId', minRole: 'ADMIN' } as const;

export async function apiKeyRoutes(app: App, apiKeys: ApiKeyService) {
  app.get(
    '/projects/:projectId/api-keys',
    {
      config: { access },
      schema: {
        tags: ['API keys'],
        summary: 'API keys of a project, newest first (secrets are never shown again)',
        params: z.object({ projectId: z.string() }),
        response: { 200: z.object({ data: z.array(apiKey) }), ...commonErrors },
      },
    },
    async (request) => ({ data: await apiKeys.list(projectOf(request)) }),
  );

  app.post(
    '/projects/:projectId/api-keys',
    {
      config: { access },
      schema: {
        tags: ['API keys'],
        summary: 'Create an API key; `key` is the secret, returned this once only',
        params: z.object({ projectId: z.string() }),
        body: z.strictObject({
          name: z.string().trim().min(1).max(200),
          mode: z.enum(['live', 'test']),
          scope: z.enum(['server', 'publishable']).default('server').describe('default server'),
        }),
        response: { 201: apiKey.extend({ key: z.string() }), ...commonErrors },
      },
    },
    async (request, reply) => reply.status(201).send(await apiKeys.create(projectOf(request), request.body)),
  );

  app.delete(
    '/projects/:projectId/api-keys/:keyId',
    {
      config: { access },
      schema: {
        tags: ['API keys'],
        summary: 'Revoke an API key; it answers 401 Invalid API key from then on',
        params: z.object({ projectId: z.string(), keyId: z.string() }),
        response: { 200: apiKey, ...commonErrors },
      },
    },
    (request) => apiKeys.revoke(projectOf(request), request.params.keyId),
  );
}
