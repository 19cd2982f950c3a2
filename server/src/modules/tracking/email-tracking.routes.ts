// Public email tracking (spec 4.7): GET /e/open/:campaignId/:subscriberId (the pixel) and GET /e/click/… (the redirect).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SIGNATURE_PARAMETER } from '../../delivery/index.js';
import { errorEnvelope } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { EmailTrackingService } from './email-tracking.service.js';
import type { TrackingRequest } from './machine-signals.js';

const tags = ['Tracking'];
const params = z.object({
  campaignId: z.string().describe("The campaign's id for campaign mail, the message's id for transactional mail"),
  subscriberId: z.string(),
});
const signature = z.string().optional().describe('The link\'s signature, as Herald wrote it in the mail');

/** GIF89a, 1×1, one transparent pixel. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

// A person follows these links from a mail client: a refusal is a page they can read, not the API's JSON envelope.
const INVALID_LINK_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">' +
  '<title>Link not valid</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem">' +
  '<h1>This link is not valid</h1><p>It may have been changed or copied incompletely. Please use the link exactly as it came in the email.</p></body></html>';

const invalidLink = (reply: FastifyReply) =>
  reply
    .status(400)
    .headers({ 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-security-policy': "default-src 'none'" })
    .send(INVALID_LINK_PAGE);

/**
 * A header carries no character beyond printable ASCII; a browser following the href would percent-encode the rest
 * (hosts included: a URL's host is percent-decoded before IDNA), so the redirect does the same.
 */
const asciiLocation = (target: string) => target.replace(/[^\x21-\x7e]+/g, (run) => encodeURIComponent(run));

const linked = ({ campaignId, subscriberId }: { campaignId: string; subscriberId: string }) => ({ id: campaignId, subscriberId });

const trackingRequest = (request: FastifyRequest): TrackingRequest => ({ method: request.method, userAgent: request.headers['user-agent'], ip: request.ip });

export async function emailTrackingRoutes(app: App, tracking: EmailTrackingService) {
  app.get(
    '/e/open/:campaignId/:subscriberId',
    {
      config: { access: { auth: 'public' }, secretParams: [SIGNATURE_PARAMETER] },
      schema: {
        tags,
        summary: 'The open pixel of an email: records an open',
        description:
          'A 1×1 transparent GIF, never cached (`Cache-Control: no-store`). Every fetch is logged as an open in the ' +
          "delivery's events; the first open of each delivery moves its status and is counted in `opened`, later ones are " +
          'logged only. Likely machine opens (Apple Mail Privacy Protection, scanners) are flagged in the event, so human ' +
          'opens can be told apart. A missing or wrong signature → 400 with a small HTML page, nothing recorded.',
        params,
        querystring: z.object({ [SIGNATURE_PARAMETER]: signature }),
        produces: ['image/gif'],
        response: { 200: z.instanceof(Buffer).describe(`image/gif, ${PIXEL.length} bytes`), 429: errorEnvelope },
      },
    },
    async (request, reply) => {
      if (!(await tracking.open(linked(request.params), request.query[SIGNATURE_PARAMETER], trackingRequest(request)))) return invalidLink(reply);
      return reply.headers({ 'content-type': 'image/gif', 'cache-control': 'no-store' }).send(PIXEL);
    },
  );

  app.get(
    '/e/click/:campaignId/:subscriberId',
    {
      config: { access: { auth: 'public' }, secretParams: [SIGNATURE_PARAMETER] },
      schema: {
        tags,
        summary: 'A tracked link of an email: records the click and redirects to its target',
        description:
          '302 to `u`, the target Herald signed into the link with the campaign (or message) and the subscriber. Every ' +
          "click is logged in the delivery's events with its target; the first click of each delivery moves its status and " +
          'is counted in `clicked`, later ones are logged only. Likely machine clicks (known scanner agents, HEAD requests, ' +
          'three or more distinct links of one delivery within a second — never how soon after the send) are flagged in the event. A target, campaign or subscriber the signature does not cover, ' +
          'or no signature → 400 with a small HTML page: never a redirect, nothing recorded.',
        params,
        querystring: z.object({ u: z.string().optional().describe('The target URL, URL-encoded'), [SIGNATURE_PARAMETER]: signature }),
        response: { 302: z.null().describe('`Location`: the target'), 429: errorEnvelope },
      },
    },
    async (request, reply) => {
      const target = await tracking.click(linked(request.params), request.query.u, request.query[SIGNATURE_PARAMETER], trackingRequest(request));
      if (target === undefined) return invalidLink(reply);
      return reply.header('cache-control', 'no-store').redirect(asciiLocation(target), 302);
    },
  );
}
