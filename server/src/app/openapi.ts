// The OpenAPI 3.1 document, generated from the routes' Zod schemas, and the Swagger UI playground at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { allowsPublishable, type Access } from '../http/access.js';

const jwt = { bearerAuth: [], orgId: [] };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Text bodies a route reads besides its JSON one (a content-type parser of its own): media type → description. */
    textBodies?: Record<string, string>;
  }
}

/** The security requirement a route's access declaration means, so /docs shows and sends the right headers. */
function securityFor(access: Access): Record<string, string[]>[] {
  switch (access.auth) {
    case 'public':
      return [];
    case 'user':
      // An empty requirement makes the bearer token optional.
      return access.optional ? [{}, { bearerAuth: [] }] : [{ bearerAuth: [] }];
    case 'organization':
      return [jwt];
    case 'project':
      if (access.credentials === 'jwt') return [jwt];
      if (access.credentials === 'jwt-query') return [{ tokenQuery: [], orgIdQuery: [] }, jwt];
      return [
        { apiKey: [] },
        ...(access.publishable ? [{ publishableKey: [] }] : []),
        ...(access.credentials === 'apiKey' ? [] : [jwt]),
      ];
  }
}

type JsonSchema = Record<string, unknown>;

/** Carries "this body may be absent" from the route transform to the document (swagger copies `x-` keys over). */
const OPTIONAL_BODY = 'x-optional-body';

/**
 * A converted schema as the schema of a media type. The Zod conversion leaves a placeholder `$id` on every schema;
 * @fastify/swagger drops it at the top of a body or response, but titles a schema nested under `content` with it.
 */
function mediaType(schema: JsonSchema) {
  const { $id: _placeholder, ...rest } = schema;
  return { schema: rest };
}

/** The responses of a route that `produces` another media type: successes in that type, errors in JSON. */
function byMediaType(responses: Record<string, JsonSchema>, produces: readonly string[]) {
  return Object.fromEntries(
    Object.entries(responses).map(([status, schema]) => {
      const types = status.startsWith('2') ? produces : ['application/json'];
      const description = typeof schema.description === 'string' ? { description: schema.description } : {};
      return [status, { ...description, content: Object.fromEntries(types.map((type) => [type, mediaType(schema)])) }];
    }),
  );
}

export async function registerOpenApi(app: FastifyInstance, publicUrl: string) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Herald API',
        version: '0.1.0',
        description: [
          'Multi-channel messaging: web push, email, SMS and WhatsApp.',
          '',
          'Authenticate with a project API key (`x-api-key`), or with a dashboard token from `POST /auth/login`',
          '(`Authorization: Bearer …`) plus the organization to act in (`x-org-id`).',
          'A server key (`hrd_live_…`, `hrd_test_…`) opens every project route. A publishable key (`hrd_pub_live_…`,',
          '`hrd_pub_test_…`), the one a web page holds, opens only the routes whose security lists `publishableKey`; every',
          'other route answers it 403 `publishable_key_forbidden`. Those routes answer CORS preflights from any origin and',
          "cross-origin calls from the project's `settings.allowedOrigins` (any origin while the list is empty); a key used",
          'from another origin → 403 `origin_not_allowed`.',
          'Every non-2xx answer is an error envelope: `statusCode`, `code`, `message`, `requestId`, and `details` on 422.',
          'A route that requires a body answers 400 `body_required` when it is missing or empty; invalid JSON is 400 `invalid_json`.',
          'Refused before routing, still in the envelope: a path parameter over 2295 characters as sent (414 `uri_too_long`), ' +
            'a bad percent-encoding in the path (400 `bad_url`); by the HTTP parser: headers over 16 KB (431 `headers_too_large`), ' +
            'a request that is not HTTP (400 `bad_request`), with a generated `requestId`, and the connection closed.',
          'Every date and timestamp given (filters, `sendAt`, ranges) lies between 0001-01-01 and 9999-12-31 UTC; outside, 422.',
          'Lists take `page` (1-based) and `pageSize` (default 20, max 100) and answer `{data, page, pageSize, total}`.',
        ].join('\n'),
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'apiKey',
            in: 'header',
            name: 'x-api-key',
            description: 'Server API key of a project (hrd_live_… or hrd_test_…): every project route; keep it on your servers',
          },
          publishableKey: {
            type: 'apiKey',
            in: 'header',
            name: 'x-api-key',
            description:
              'Publishable API key of a project (hrd_pub_live_… or hrd_pub_test_…), safe in a web page: only the routes ' +
              'that list it (push config, register, identify, tag, untag, seen, update and read a subscriber by token); ' +
              'elsewhere 403 publishable_key_forbidden',
          },
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'access_token from POST /auth/login' },
          orgId: { type: 'apiKey', in: 'header', name: 'x-org-id', description: 'Organization to act in (with a JWT)' },
          tokenQuery: { type: 'apiKey', in: 'query', name: 'token', description: 'access_token from POST /auth/login, for event streams' },
          orgIdQuery: { type: 'apiKey', in: 'query', name: 'orgId', description: 'Organization to act in, for event streams' },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, for GET /metrics on the API port' },
        },
      },
    },
    transform: (input) => {
      const transformed = jsonSchemaTransform(input);
      const { access, textBodies } = input.route.config ?? {};
      const schema: typeof transformed.schema & { [OPTIONAL_BODY]?: true } = { ...transformed.schema };
      if (access && !schema.security) schema.security = securityFor(access);
      if (allowsPublishable(access)) {
        const note =
          "Callable with a publishable key, cross-origin from the project's allowedOrigins (any origin when empty).";
        schema.description = schema.description ? `${schema.description}\n\n${note}` : note;
      }
      // @fastify/swagger marks every body required; a body the route's schema lets be absent is marked optional below.
      if ((input.schema.body as z.ZodType | undefined)?.safeParse(undefined).success) schema[OPTIONAL_BODY] = true;
      if (textBodies && schema.body) {
        const text = Object.entries(textBodies).map(([type, description]) => [type, { schema: { type: 'string', description } }]);
        schema.body = { content: { 'application/json': mediaType(schema.body as JsonSchema), ...Object.fromEntries(text) } };
      }
      // Any body over its route's limit (1 MB; the contact import 20 MB) is refused before validation, and a path
      // parameter over the router's limit (app.ts) before routing.
      const responses = (schema.response ?? {}) as Record<string, unknown>;
      const envelope = Object.entries(responses).find(([status]) => /^[45]/.test(status))?.[1];
      if (schema.body && envelope) schema.response = { ...responses, 413: envelope };
      if (schema.params && envelope) schema.response = { ...(schema.response as Record<string, unknown>), 414: envelope };
      if (schema.produces && schema.response) {
        schema.response = byMediaType(schema.response as Record<string, JsonSchema>, schema.produces);
      }
      return { ...transformed, schema };
    },
    transformObject: (documentObject) => {
      const document = jsonSchemaTransformObject(documentObject) as { paths?: Record<string, Record<string, JsonSchema>> };
      for (const operation of Object.values(document.paths ?? {}).flatMap((path) => Object.values(path))) {
        if (!operation[OPTIONAL_BODY]) continue;
        delete operation[OPTIONAL_BODY];
        (operation.requestBody as JsonSchema).required = false;
      }
      return document as ReturnType<typeof jsonSchemaTransformObject>;
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { persistAuthorization: true, tryItOutEnabled: true },
  });
}
