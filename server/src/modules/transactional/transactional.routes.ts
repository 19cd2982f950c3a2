// Transactional push routes (spec 4.8): POST /transactional/send with an API key, and the project's send log.
import { z } from 'zod';
import { projectOf, tenantOf } from '../../http/access.js';
import { idempotencyHeaders, idempotent } from '../../http/idempotency.js';
import { commonErrors, errorEnvelope, paginated, paginationQuery } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { IdempotencyService } from '../idempotency/idempotency.service.js';
import * as s from './transactional.schemas.js';
import type { TransactionalService } from './transactional.service.js';

const tags = ['Transactional'];

const SEND_DESCRIPTION = `
Sends one push now to the recipient named by \`externalId\` (every device linked to that user id, at most 100) or
\`token\` (one device). \`externalId\` is preferred: when both are given, \`externalId\` names the recipient and
\`token\` is ignored; neither → 422. API key only. A processed request answers 200 with the envelope; malformed input → 422 and
bad credentials → 401, with the error envelope.

**Which devices.** Subscribers of the key's environment only: a live key reaches live subscribers, a test key sandbox
ones. Every device that is \`active\` and has a push subscription is sent to, unless the project's delivery policy
holds it (quiet hours in the device's time zone — else the project's \`settings.timezone\`, else UTC — or the
frequency cap, counted per device). Retryable push service failures are retried inline for a few seconds
(\`TRANSACTIONAL_RETRY_BUDGET_MS\`), then answered \`provider_error\`.

**The envelope** summarizes every device: \`delivered\` is true when at least one device accepted the push (then
\`reason\` is null, even if other devices did not); \`deactivated\` is true when this send deactivated a device:
found gone (push service 404/410: now \`unsubscribed\`) or its endpoint refused as not public (\`provider_error\`; now
\`inactive\`). When no device got it, \`reason\` is the reason of the device that came closest, in this order: \`payload_too_large\` (the encrypted push exceeds 4 KB), \`provider_error\`,
\`quiet_hours\`, \`frequency_capped\`, \`subscriber_unsubscribed\` (permission revoked, subscription gone, or no push
subscription), \`subscriber_inactive\` (deactivated). Before any device: \`subscriber_not_found\` (nothing matches,
\`subscriberFound\` false) and \`subscriber_inactive\` (only subscribers of the other environment match).

**Test keys** are accepted and recorded (message, delivery rows, send log) and never delivered: the answer is
\`{success: true, subscriberFound: true, delivered: false, deactivated: false, reason: "sandbox"}\` when a device
would have been sent to (\`sandbox\` is a Herald reason beyond spec 7.4); policy and device reasons apply as for a
live key.

**Defaults** of the Herald extras: \`ttl\` 86400 seconds (one day), \`urgency\` normal, no \`topic\`, no \`actions\`.
Every send, whatever its outcome, is logged (GET /transactional/sends/project/{projectId}).`.trim();

export async function transactionalRoutes(app: App, transactional: TransactionalService, idempotency: IdempotencyService) {
  app.post(
    '/transactional/send',
    {
      config: { access: { auth: 'project', credentials: 'apiKey' } },
      schema: {
        tags,
        summary: 'Send one push to a user or device now (API key only)',
        description: SEND_DESCRIPTION,
        headers: idempotencyHeaders,
        body: s.sendBody,
        response: { 200: s.sendEnvelope, ...commonErrors, 409: errorEnvelope },
      },
    },
    (request, reply) => {
      const tenant = tenantOf(request);
      if (tenant.kind !== 'project') throw new Error('POST /transactional/send is API key only: check its access');
      return idempotent(request, reply, idempotency, (key) => transactional.send(tenant, request.body, key));
    },
  );

  app.get(
    '/transactional/sends/project/:projectId',
    {
      config: { access: { auth: 'project', project: 'params.projectId' } },
      schema: {
        tags,
        summary: 'The transactional send log of a project, newest first, with filters',
        description:
          'Every send is logged, including refusals and unknown recipients: the key that sent it, the recipient as named, ' +
          'the envelope answered. A test key sees only its sandbox sends.',
        params: z.object({ projectId: z.string() }),
        querystring: z.strictObject({ ...paginationQuery, ...s.sendsQuery }),
        response: { 200: paginated(s.sendRecord), ...commonErrors },
      },
    },
    (request) => {
      const { page, pageSize, ...filters } = request.query;
      return transactional.listSends(projectOf(request), filters, page, pageSize);
    },
  );
}
