// Twilio's request signature (X-Twilio-Signature): base64 HMAC-SHA1, under the account's auth token, of the URL
// Twilio was given followed by every POST parameter's name and value, sorted by name.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookRequest } from '../../channel.js';

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

export function twilioSignature(authToken: string, url: string, params: URLSearchParams): string {
  const pairs = [...params].sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1));
  const data = url + pairs.map(([name, value]) => name + value).join('');
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** The request's form parameters when its signature holds under `authToken`; undefined when it does not. */
export function verifyTwilioRequest(request: WebhookRequest, authToken: string): URLSearchParams | undefined {
  const header = request.headers[TWILIO_SIGNATURE_HEADER];
  const given = Buffer.from(typeof header === 'string' ? header : '', 'utf8');
  const params = new URLSearchParams(request.rawBody.toString('utf8'));
  const expected = Buffer.from(twilioSignature(authToken, request.url, params), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected) ? params : undefined;
}
