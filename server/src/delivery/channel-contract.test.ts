// The contract every channel adapter passes through the real engine and database: run against web push (the local
// push service), email (local SMTP and SES), SMS and WhatsApp (a local Twilio, a local Cloud API) and a fake adapter.
import { createHmac, generateKeyPairSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';
import { createFakeBrowser, startPushService, type PushService } from '../../test/push-service.js';
import { startSesPeer, type SesAnswer } from '../../test/ses-peer.js';
import { startSmtpPeer, type SmtpAnswer } from '../../test/smtp-peer.js';
import { startWhatsAppPeer, type CloudAnswer } from '../../test/whatsapp-peer.js';
import { newTwilioAccount, startTwilioPeer, type TwilioError } from '../../test/twilio-peer.js';
import { loadConfig } from '../config.js';
import type { Channel, DeliveryEvent, MessageContent } from '../db/schema.js';
import { newId } from '../shared/ids.js';
import { ProviderError, type ChannelAdapter, type ChannelProvider, type ProviderRate, type SendOutcome } from './channel.js';
import type { DeliveryReason } from './delivery-reason.js';
import { createEmailAdapter } from './channels/email/email-adapter.js';
import { createSesProvider } from './channels/email/ses-provider.js';
import { createSmtpProvider } from './channels/email/smtp-provider.js';
import { createOutboundGuard } from './outbound-guard.js';
import { createPushAdapter } from './channels/push/push-adapter.js';
import { createWebPushProvider } from './channels/push/web-push-provider.js';
import { createSmsAdapter } from './channels/sms/sms-adapter.js';
import { createTwilioProvider } from './channels/sms/twilio-provider.js';
import { createCloudApiProvider } from './channels/whatsapp/cloud-api.js';
import { createTwilioWhatsAppProvider } from './channels/whatsapp/twilio-whatsapp.js';
import { createWhatsAppAdapter } from './channels/whatsapp/whatsapp-adapter.js';
import { createSandboxProvider } from './channels/sandbox.js';
import { DeliveryEngine, SEND_RATE_CODE } from './delivery-engine.js';
import { applyProviderEvents } from './delivery-events.repository.js';
import { claimDue, findMessages, type AddressChannel } from './delivery.repository.js';
import { redisSendRate, type SendRate } from './send-rate.js';

/** What a recipient's provider answers next: accepted, gone for good, rate limited, or refused. */
type Answer = 'ok' | 'gone' | 'refused' | { retryAfterSeconds: number };

interface Recipient {
  subscriberId: string;
  /** The address its deliveries go to (channels that reach addresses); push reaches the device. */
  destination?: string;
  /** Programs this recipient's next answers; then it accepts. */
  answer(...answers: Answer[]): void;
  /** Sends that reached the provider's peer for this recipient. */
  received(): number;
}

interface Harness {
  channel: Channel;
  adapter: ChannelAdapter;
  recipient(): Promise<Recipient>;
  /** Content this channel sends, and the options its messages carry. */
  content: MessageContent;
  options?: Record<string, unknown>;
  /** The id the provider names an accepted message by (then it must be recorded), if it names one. */
  providerMessageId?: (sent: { deliveryId: number; messageId: string; subscriberId: string }) => string;
  /** Content this channel cannot send, and the problems its adapter names. */
  unsendable: { content: MessageContent; problems: unknown };
  /**
   * How a recipient the provider finds dead fails: the reason, the provider's code the address keeps, and the state it
   * takes (`unreachable` unless named: on WhatsApp the person's block opts the number out).
   */
  gone: { reason: DeliveryReason; code: string; status?: 'opted_out' } | undefined;
  /** Whether its items draw from a provider's rate: each then goes at its own booked slot, in a call of its own. */
  rated?: boolean;
  /** Whether the provider says how long to wait when it defers a send (HTTP's Retry-After; SMTP has none). */
  retryAfter: boolean;
  close(): Promise<void>;
}

let t: TestApp;
let tenant: Tenant;
const query = async <T>(text: string, params: unknown[] = []) => (await t.database.pool.query(text, params)).rows as T[];

beforeAll(async () => {
  t = await startTestApp();
  tenant = await createTenant(t);
});
afterAll(() => t.close());

const config = loadConfig({
  ALLOW_INSECURE_PUSH_ENDPOINTS: 'true',
  PUBLIC_URL: 'https://herald.example.com',
  DELIVERY_POLL_INTERVAL_MS: '50',
  DELIVERY_RETRY_BASE_MS: '20',
  DELIVERY_MAX_ATTEMPTS: '3',
  DELIVERY_BATCH_SIZE: '10',
});

/** The email adapters here send; SES's callbacks are tested through SNS (modules/email-webhooks). */
const NO_SNS_TOPICS = { topicArns: [], maxAgeSeconds: 3600, machineSignals: () => [] };

/** Counts the provider's calls, to check batching: the adapter's own provider, observed, not replaced. */
function observed<Item>(provider: ChannelProvider<Item>, batches: number[]): ChannelProvider<Item> {
  return { name: provider.name, send: (items) => (batches.push(items.length), provider.send(items)), close: () => provider.close() };
}

async function insertEmailSubscriber(email: string): Promise<string> {
  const subscriberId = newId('sub');
  await query(`INSERT INTO subscribers (id, project_id, token, email) VALUES ($1, $2, $3, $4)`, [
    subscriberId,
    tenant.projectId,
    randomBytes(12).toString('hex'),
    email,
  ]);
  return subscriberId;
}

async function insertSubscriber(fields: { endpoint?: string; p256dh?: string; auth?: string; phone?: string } = {}): Promise<string> {
  const id = newId('sub');
  await query(`INSERT INTO subscribers (id, project_id, token, endpoint, p256dh, auth, phone) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    id,
    tenant.projectId,
    randomBytes(12).toString('hex'),
    fields.endpoint ?? null,
    fields.p256dh ?? null,
    fields.auth ?? null,
    fields.phone ?? null,
  ]);
  return id;
}

async function pushHarness(batches: number[]): Promise<Harness> {
  const service: PushService = await startPushService();
  const adapter = createPushAdapter({
    publicUrl: config.publicUrl,
    tracking: t.services.tracking,
    vapidSubject: config.push.vapidSubject,
    live: observed(createWebPushProvider({ ...config.push, allowInsecureEndpoints: true }), batches),
    sandbox: createSandboxProvider(),
  });
  const status = (answer: Answer) =>
    answer === 'ok' ? 201 : answer === 'gone' ? 410 : answer === 'refused' ? 400 : { status: 429, headers: { 'retry-after': String(answer.retryAfterSeconds) } };
  return {
    channel: 'push',
    adapter,
    content: { title: 'Hello', body: 'World' },
    gone: { reason: 'subscriber_unsubscribed', code: 'http_410' },
    retryAfter: true,
    unsendable: {
      content: { title: 'Hello', body: 'x'.repeat(5000) },
      problems: [{ error: expect.stringMatching(/^the push would be \d+ bytes; at most \d+ fit in a web push$/) }],
    },
    async recipient() {
      const browser = createFakeBrowser();
      const subscriberId = await insertSubscriber({ endpoint: service.endpointFor(browser), p256dh: browser.p256dh, auth: browser.auth });
      return {
        subscriberId,
        answer: (...answers) => service.respond(browser.id, ...answers.map(status)),
        received: () => service.requestsFor(browser.id).length,
      };
    },
    close: async () => {
      await adapter.close();
      await service.close();
    },
  };
}

/** The fake channel's content is a text message's: its `body`. */
const bodyOf = (content: MessageContent) => String((content as { body?: unknown }).body ?? '');

/** The fake provider's callbacks: a JSON body of events, its HMAC-SHA256 (hex, keyed by `webhookSecret`) in a header. */
const FAKE_SIGNATURE = 'x-fake-signature';
const fakeSignature = (secret: string, body: Buffer) => createHmac('sha256', secret).update(body).digest('hex');

/**
 * A channel whose provider is an in-memory peer: it names each accepted message, as email and SMS providers do, and
 * calls back with signed events. With a `gate`, every send waits for it (a slow provider), and `inFlight` tells the
 * most items it held at once. With a `rate`, every item draws from it (one sender's documented rate), and
 * `receivedAt` tells when each item arrived. With `bulk`, items sharing a body go in one call, and `bodies` tells the
 * bodies of each call.
 */
function fakeHarness(
  batches: number[],
  options: { channel?: AddressChannel; gate?: Promise<void>; rate?: ProviderRate; bulk?: boolean } = {},
): Harness & { inFlight: { now: number; max: number }; receivedAt: number[]; bodies: string[][] } {
  const channel = options.channel ?? 'sms';
  const inFlight = { now: 0, max: 0 };
  const receivedAt: number[] = [];
  const bodies: string[][] = [];
  const answers = new Map<string, Answer[]>();
  const received = new Map<string, number>();
  interface FakeItem {
    deliveryId: number;
    subscriberId: string;
    body: string;
  }
  const provider: ChannelProvider<FakeItem> = {
    name: 'fake',
    send: async (items) => {
      bodies.push(items.map((item) => item.body));
      inFlight.now += items.length;
      inFlight.max = Math.max(inFlight.max, inFlight.now);
      await options.gate;
      inFlight.now -= items.length;
      return items.map(({ deliveryId, subscriberId }): SendOutcome => {
        receivedAt.push(Date.now());
        received.set(subscriberId, (received.get(subscriberId) ?? 0) + 1);
        const answer = answers.get(subscriberId)?.shift() ?? 'ok';
        if (answer === 'ok') return { ok: true, providerCode: 'accepted', providerMessageId: `fake-${deliveryId}-${received.get(subscriberId)}` };
        if (answer === 'gone') {
          return { ok: false, error: new ProviderError('no such recipient', { reason: 'subscriber_unsubscribed', retryable: false, providerCode: 'gone', deadRecipient: 'gone' }) };
        }
        if (answer === 'refused') return { ok: false, error: new ProviderError('refused', { reason: 'provider_error', retryable: false, providerCode: 'refused' }) };
        return {
          ok: false,
          error: new ProviderError('slow down', { reason: 'provider_error', retryable: true, providerCode: 'rate_limited', retryAfterMs: answer.retryAfterSeconds * 1000 }),
        };
      });
    },
    close: async () => {},
  };
  const live = observed(provider, batches);
  const adapter: ChannelAdapter<FakeItem, typeof channel> = {
    channel,
    validate: (content) => (bodyOf(content).length > 1600 ? [{ field: 'body', error: 'must be at most 1600 characters' }] : undefined),
    // An address channel: what counts is the number's reachability, whatever its subscriber's push status.
    address: (delivery, message) =>
      delivery.recipient?.status === 'reachable'
        ? { item: { deliveryId: delivery.id, subscriberId: delivery.subscriberId, body: bodyOf(message.content) } }
        : { refusal: 'subscriber_unsubscribed' },
    rate: () => options.rate,
    bulkKey: options.bulk ? (item) => item.body : undefined,
    webhooks: {
      fake: {
        async verifyAndParse(request, credentials) {
          const signature = Buffer.from(String(request.headers[FAKE_SIGNATURE] ?? ''), 'hex');
          const expected = Buffer.from(fakeSignature(credentials.webhookSecret!, request.rawBody), 'hex');
          if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) return { refused: 'bad_signature' };
          const body = JSON.parse(request.rawBody.toString('utf8')) as { events: { id: string; event: DeliveryEvent; at: string }[] };
          return { events: body.events.map((e) => ({ providerMessageId: e.id, type: e.event, occurredAt: new Date(e.at), detail: { event: e.event } })) };
        },
      },
    },
    provider: (sandbox) => (sandbox ? createSandboxProvider<FakeItem>() : live),
    close: async () => {},
  };
  return {
    channel,
    adapter,
    inFlight,
    receivedAt,
    bodies,
    content: { title: 'Hello', body: 'World' },
    providerMessageId: ({ deliveryId }) => `fake-${deliveryId}-1`,
    gone: { reason: 'subscriber_unsubscribed', code: 'gone' },
    retryAfter: true,
    unsendable: { content: { title: 'Hello', body: 'x'.repeat(1601) }, problems: [{ field: 'body', error: 'must be at most 1600 characters' }] },
    async recipient() {
      const destination = `+1415${randomBytes(4).readUInt32BE() % 10_000_000}`.padEnd(12, '0');
      const subscriberId = await insertSubscriber({ phone: destination });
      return { subscriberId, destination, answer: (...next) => answers.set(subscriberId, [...(answers.get(subscriberId) ?? []), ...next]), received: () => received.get(subscriberId) ?? 0 };
    },
    close: async () => {},
  };
}

/**
 * Email through the SMTP provider to a real SMTP server (test/smtp-peer.ts), the project's email configuration
 * pointing at it: a 550 at RCPT TO is a gone address, a 554 after DATA a refused message, a 451 a deferral.
 */
async function emailHarness(batches: number[]): Promise<Harness> {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const peer = await startSmtpPeer({
    dkim: { domain: 'mail.example.com', selector: 'contract', publicKey: keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64') },
  });
  const configured = await t.app.inject({
    method: 'PUT',
    url: `/projects/${tenant.projectId}/channels/email`,
    headers: tenant.jwt,
    payload: { provider: 'smtp', settings: { host: peer.host, port: peer.port, secure: false } },
  });
  expect(configured.statusCode, configured.body).toBe(200);
  const privateKey = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const adapter = createEmailAdapter({
    links: t.services.emailLinks,
    bounceDomain: 'bounces.herald.example.com',
    live: {
      smtp: observed(createSmtpProvider({ dkimKeys: async () => ({ domainName: 'mail.example.com', keySelector: 'contract', privateKey }), connections: 4, timeoutMs: 5000, guard: createOutboundGuard({ allowedHosts: t.config.outboundAllowedHosts }) }), batches),
      ses: createSandboxProvider(),
    },
    sandbox: createSandboxProvider(),
    sesCallbacks: NO_SNS_TOPICS,
  });
  const answer = (next: Answer): SmtpAnswer => (next === 'ok' ? 'ok' : next === 'gone' ? { code: 550 } : next === 'refused' ? { code: 554, at: 'DATA' } : { code: 451 });
  return {
    channel: 'email',
    adapter,
    content: { subject: 'Hello', html: '<p>World, <a href="https://example.com/">with a link</a></p>', from: { email: 'news@mail.example.com' } },
    providerMessageId: ({ deliveryId }) => `<${t.services.emailLinks.messageIdToken(deliveryId)}@mail.example.com>`,
    gone: { reason: 'recipient_bounced', code: 'smtp_550' },
    retryAfter: false,
    unsendable: { content: { subject: ' ', html: '<p>World</p>', from: { email: 'news@mail.example.com' } }, problems: [{ field: 'subject', error: 'is required' }] },
    async recipient() {
      const destination = `reader-${randomBytes(5).toString('hex')}@example.org`;
      const subscriberId = await insertEmailSubscriber(destination);
      return {
        subscriberId,
        destination,
        answer: (...next) => peer.respond(destination, ...next.map(answer)),
        // Every send is one RCPT TO, accepted or not; every accepted message passed DKIM.
        received: () => {
          expect(peer.received(destination).filter((mail) => mail.dkim.result !== 'pass')).toEqual([]);
          return peer.attempts(destination);
        },
      };
    },
    close: async () => {
      await adapter.close();
      await peer.close();
    },
  };
}

/**
 * SMS or WhatsApp through Twilio's providers to a local Messages API (test/twilio-peer.ts), the project's configuration
 * of the channel naming its account. Each call programs the peer with its items' next answers: a 400 naming a dead
 * number (SMS 21211, an invalid To; WhatsApp 63014, the person blocked the sender), a 400 refusing the message (21408,
 * region not enabled), a 429 without Retry-After for a deferral.
 */
async function twilioHarness(channel: 'sms' | 'whatsapp', batches: number[]): Promise<Harness> {
  const account = newTwilioAccount();
  const peer = await startTwilioPeer([account]);
  await query(
    `INSERT INTO channel_configs (project_id, channel, provider, settings, credentials) VALUES ($1, $2, 'twilio', $3, $4)
     ON CONFLICT (project_id, channel) DO UPDATE SET provider = excluded.provider, settings = excluded.settings, credentials = excluded.credentials`,
    [tenant.projectId, channel, { accountSid: account.accountSid, messagingServiceSid: 'MG00000000000000000000000000000001' }, `plain:${JSON.stringify({ authToken: account.authToken })}`],
  );
  const answers = new Map<string, Answer[]>();
  const attempts = new Map<string, number>();
  const gone = channel === 'sms' ? { status: 400, code: 21211, message: "The 'To' number is not a valid phone number." } : { status: 400, code: 63014, message: 'The recipient blocked the sender' };
  const errorOf = (next: Answer | undefined): TwilioError | undefined =>
    next === undefined || next === 'ok'
      ? undefined
      : next === 'gone'
        ? gone
        : next === 'refused'
          ? { status: 400, code: 21408, message: 'Permission to send has not been enabled for the region' }
          : { status: 429, code: 20429, message: 'Too Many Requests' };
  /** The provider, calling the peer once its items' answers are programmed. */
  const programmed = <Item extends { to: string }>(provider: ChannelProvider<Item>): ChannelProvider<Item> => ({
    name: provider.name,
    send: (items) => {
      for (const { to } of items) {
        attempts.set(to, (attempts.get(to) ?? 0) + 1);
        peer.answer(channel === 'sms' ? to : `whatsapp:${to}`, errorOf(answers.get(to)?.shift()));
      }
      return provider.send(items);
    },
    close: () => provider.close(),
  });
  const options = { baseUrl: peer.url, timeoutMs: 5000 };
  const adapter: ChannelAdapter =
    channel === 'sms'
      ? createSmsAdapter({ publicUrl: config.publicUrl, live: observed(programmed(createTwilioProvider(options)), batches), sandbox: createSandboxProvider() })
      : createWhatsAppAdapter({
          publicUrl: config.publicUrl,
          live: { twilio: observed(programmed(createTwilioWhatsAppProvider(options)), batches), meta: createSandboxProvider() },
          sandbox: createSandboxProvider(),
        });
  return {
    channel,
    adapter,
    ...(channel === 'sms'
      ? {
          content: { body: 'Hello' },
          unsendable: { content: { body: '' }, problems: [{ field: 'body', error: 'must not be empty' }] },
          gone: { reason: 'invalid_phone', code: 'twilio_21211' },
        }
      : {
          content: { type: 'text', text: 'Hello' },
          unsendable: { content: { type: 'text', text: ' ' }, problems: [{ field: 'text', error: 'must not be empty' }] },
          gone: { reason: 'recipient_opted_out', code: 'twilio_63014', status: 'opted_out' },
        }),
    // A transactional send names the sender's rate in its options (SMS); WhatsApp's is the adapter's.
    options: channel === 'sms' ? { ratePerSecond: 1000 } : {},
    providerMessageId: ({ deliveryId }) => peer.messages.find((m) => m.statusCallback.endsWith(`=${deliveryId}`))!.sid,
    rated: true,
    retryAfter: false,
    async recipient() {
      const destination = `+1415${randomBytes(4).readUInt32BE() % 10_000_000}`.padEnd(12, '0');
      const subscriberId = await insertSubscriber({ phone: destination });
      return {
        subscriberId,
        destination,
        answer: (...next) => answers.set(destination, [...(answers.get(destination) ?? []), ...next]),
        received: () => attempts.get(destination) ?? 0,
      };
    },
    close: async () => {
      await adapter.close();
      await peer.close();
    },
  };
}

/**
 * WhatsApp through Meta's Cloud API provider to a local Graph API (test/whatsapp-peer.ts), the project's WhatsApp
 * configuration naming its phone number: 131050 (the person stopped marketing messages) opts the number out, 131009
 * (a parameter Meta refuses) is a refused message, 130429 (throughput) a deferral without Retry-After.
 */
async function metaHarness(batches: number[]): Promise<Harness> {
  const accessToken = randomBytes(16).toString('hex');
  const phoneNumberId = `1${randomBytes(4).readUInt32BE()}`;
  const peer = await startWhatsAppPeer({ accessToken, phoneNumberId, wabaId: 'waba-contract' });
  await query(
    `INSERT INTO channel_configs (project_id, channel, provider, settings, credentials) VALUES ($1, 'whatsapp', 'meta', $2, $3)
     ON CONFLICT (project_id, channel) DO UPDATE SET provider = excluded.provider, settings = excluded.settings, credentials = excluded.credentials`,
    [tenant.projectId, { phoneNumberId }, `plain:${JSON.stringify({ accessToken, appSecret: 'contract-app-secret' })}`],
  );
  const answer = (next: Answer): CloudAnswer =>
    next === 'ok'
      ? 'ok'
      : next === 'gone'
        ? { status: 400, code: 131050, message: 'Unable to deliver the message: the user stopped marketing messages' }
        : next === 'refused'
          ? { status: 400, code: 131009, message: 'Parameter value is not valid' }
          : { status: 429, code: 130429, message: 'Rate limit hit' };
  const live = observed(createCloudApiProvider({ graphUrl: peer.url, version: peer.version, timeoutMs: 5000 }), batches);
  const adapter = createWhatsAppAdapter({ publicUrl: config.publicUrl, live: { meta: live, twilio: createSandboxProvider() }, sandbox: createSandboxProvider() });
  const destinations = new Map<string, string>();
  return {
    channel: 'whatsapp',
    adapter,
    content: { type: 'text', text: 'Hello' },
    unsendable: { content: { type: 'text', text: ' ' }, problems: [{ field: 'text', error: 'must not be empty' }] },
    gone: { reason: 'recipient_opted_out', code: 'meta_131050', status: 'opted_out' },
    providerMessageId: ({ subscriberId }) => peer.messages.find((m) => m.to === destinations.get(subscriberId))!.id,
    rated: true,
    retryAfter: false,
    async recipient() {
      const destination = `+1415${randomBytes(4).readUInt32BE() % 10_000_000}`.padEnd(12, '0');
      const subscriberId = await insertSubscriber({ phone: destination });
      destinations.set(subscriberId, destination);
      return { subscriberId, destination, answer: (...next) => peer.respond(destination, ...next.map(answer)), received: () => peer.attempts(destination) };
    },
    close: async () => {
      await adapter.close();
      await peer.close();
    },
  };
}

/**
 * Email through the SES provider to a local SES API (test/ses-peer.ts), the project's email configuration naming its
 * account: `MessageRejected` is a refused message, `TooManyRequestsException` a deferral without Retry-After. SES
 * takes any address: a dead one bounces later, through SNS (`modules/email-webhooks`), so no send finds it gone.
 */
async function sesHarness(batches: number[]): Promise<Harness> {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const credentials = { accessKeyId: 'AKIACONTRACT', secretAccessKey: randomBytes(20).toString('hex') };
  const peer = await startSesPeer({
    credentials,
    dkim: { domain: 'mail.example.com', selector: 'contract', publicKey: keys.publicKey.export({ type: 'spki', format: 'der' }).toString('base64') },
  });
  await query(
    `INSERT INTO channel_configs (project_id, channel, provider, settings, credentials) VALUES ($1, 'email', 'ses', $2, $3)
     ON CONFLICT (project_id, channel) DO UPDATE SET provider = excluded.provider, settings = excluded.settings, credentials = excluded.credentials`,
    [tenant.projectId, { region: 'eu-west-1' }, `plain:${JSON.stringify(credentials)}`],
  );
  const privateKey = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const adapter = createEmailAdapter({
    links: t.services.emailLinks,
    bounceDomain: 'bounces.herald.example.com',
    live: {
      smtp: createSandboxProvider(),
      ses: observed(createSesProvider({ dkimKeys: async () => ({ domainName: 'mail.example.com', keySelector: 'contract', privateKey }), endpoint: peer.url, timeoutMs: 5000 }), batches),
    },
    sandbox: createSandboxProvider(),
    sesCallbacks: NO_SNS_TOPICS,
  });
  const answer = (next: Answer): SesAnswer =>
    next === 'ok' ? 'ok' : next === 'refused' ? { status: 400, error: 'MessageRejected' } : { status: 429, error: 'TooManyRequestsException' };
  const destinations = new Map<string, string>();
  return {
    channel: 'email',
    adapter,
    content: { subject: 'Hello', html: '<p>World, <a href="https://example.com/">with a link</a></p>', from: { email: 'news@mail.example.com' } },
    providerMessageId: ({ subscriberId }) => peer.messages.find((m) => m.to.includes(destinations.get(subscriberId)!))!.messageId,
    gone: undefined,
    retryAfter: false,
    unsendable: { content: { subject: ' ', html: '<p>World</p>', from: { email: 'news@mail.example.com' } }, problems: [{ field: 'subject', error: 'is required' }] },
    async recipient() {
      const destination = `reader-${randomBytes(5).toString('hex')}@example.org`;
      const subscriberId = await insertEmailSubscriber(destination);
      destinations.set(subscriberId, destination);
      return {
        subscriberId,
        destination,
        answer: (...next) => peer.respond(destination, ...next.map(answer)),
        // Every accepted message passed DKIM.
        received: () => {
          expect(peer.messages.filter((mail) => mail.to.includes(destination) && mail.dkim.result !== 'pass')).toEqual([]);
          return peer.attempts(destination);
        },
      };
    },
    close: async () => {
      await adapter.close();
      await peer.close();
    },
  };
}

interface Row {
  status: string;
  reason: string | null;
  attempts: number;
  provider_message_id: string | null;
  wait_ms: number;
}

const rowOf = async (id: number) =>
  (
    await query<Row>(
      `SELECT status, reason, attempts, provider_message_id, extract(epoch FROM next_attempt_at - updated_at)::float8 * 1000 AS wait_ms
       FROM deliveries WHERE id = $1`,
      [id],
    )
  )[0]!;

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each([
  ['web push', pushHarness],
  ['email over SMTP', emailHarness],
  ['email over SES', sesHarness],
  ['SMS over Twilio', (batches: number[]) => twilioHarness('sms', batches)],
  ['WhatsApp over Twilio', (batches: number[]) => twilioHarness('whatsapp', batches)],
  ["WhatsApp over Meta's Cloud API", metaHarness],
  ['a fake adapter', async (batches: number[]) => fakeHarness(batches)],
])('the channel contract: %s', (_name, makeHarness) => {
  let harness: Harness;
  let engine: DeliveryEngine;
  const batches: number[] = [];

  beforeAll(async () => {
    harness = await makeHarness(batches);
  });
  afterEach(async () => {
    await engine?.stop();
    batches.length = 0;
    await query(`DELETE FROM deliveries WHERE status IN ('queued', 'sending')`);
  });
  afterAll(() => harness.close());

  const start = () => {
    engine = new DeliveryEngine({ db: t.database.db, config, adapters: [harness.adapter], openCredentials: (sealed) => t.services.channels.open(sealed) });
    engine.start();
  };

  /** One message of the harness's channel queued to `recipients`; returns the delivery ids in order. */
  async function queue(recipients: Recipient[]): Promise<{ messageId: string; ids: number[] }> {
    const messageId = newId('msg');
    await query(`INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, $3, 'campaign', false, $4, $5)`, [
      messageId,
      tenant.projectId,
      harness.channel,
      harness.content,
      harness.options ?? (harness.channel === 'push' ? { ttlSeconds: 3600, urgency: 'normal' } : {}),
    ]);
    await query(`INSERT INTO message_stats (message_id, queued) VALUES ($1, $2)`, [messageId, recipients.length]);
    const ids: number[] = [];
    for (const recipient of recipients) {
      const [row] = await query<{ id: number }>(
        `INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination) VALUES ($1, $2, $3, $4, $5) RETURNING id::float8 AS id`,
        [tenant.projectId, messageId, recipient.subscriberId, harness.channel, recipient.destination ?? null],
      );
      ids.push(row!.id);
    }
    return { messageId, ids };
  }

  const settled = (ids: number[]) => until(() => Promise.all(ids.map(rowOf)), (rows) => rows.every((r) => !['queued', 'sending'].includes(r.status)));

  it('sends in batches of DELIVERY_BATCH_SIZE, one provider call per batch, and counts each outcome once', async () => {
    const recipients = await Promise.all(Array.from({ length: 25 }, () => harness.recipient()));
    const { messageId, ids } = await queue(recipients);
    start();
    const rows = await settled(ids);
    expect(rows.map((r) => r.status)).toEqual(ids.map(() => 'sent'));
    expect(batches.reduce((a, b) => a + b, 0)).toBe(25);
    expect(Math.max(...batches)).toBeLessThanOrEqual(10);
    expect(recipients.map((r) => r.received())).toEqual(recipients.map(() => 1));
    expect(await query(`SELECT sent, failed FROM message_stats WHERE message_id = $1`, [messageId])).toEqual([{ sent: 25, failed: 0 }]);
  });

  it('records one outcome per item of a batch: sent, refused and gone side by side', async () => {
    // SES names no dead address when it takes a message: its bounces come later, through SNS.
    if (!harness.gone) return;
    const [ok, refused, gone] = await Promise.all([harness.recipient(), harness.recipient(), harness.recipient()]);
    refused!.answer('refused');
    gone!.answer('gone');
    const { ids } = await queue([ok!, refused!, gone!]);
    start();
    const rows = await settled(ids);
    expect(rows.map((r) => [r.status, r.reason])).toEqual([
      ['sent', null],
      ['failed', 'provider_error'],
      ['failed', harness.gone!.reason],
    ]);
    expect(batches).toEqual(harness.rated ? [1, 1, 1] : [3]);
  });

  it('tries a deferred item again: not before Retry-After, where the provider names one', async () => {
    const recipient = await harness.recipient();
    recipient.answer({ retryAfterSeconds: 30 });
    const { ids } = await queue([recipient]);
    start();
    if (!harness.retryAfter) {
      expect(await until(() => rowOf(ids[0]!), (r) => r.status === 'sent')).toMatchObject({ attempts: 2, reason: null });
      expect(recipient.received()).toBe(2);
      return;
    }
    const row = await until(() => rowOf(ids[0]!), (r) => r.status === 'queued' && r.attempts === 1);
    expect(row.reason).toBe('provider_error');
    expect(row.wait_ms).toBeGreaterThanOrEqual(30_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(recipient.received()).toBe(1);
  });

  it('deactivates a gone recipient — a device, or an address on its channel only — and sends it nothing more', async () => {
    const { gone } = harness;
    if (!gone) return;
    const recipient = await harness.recipient();
    recipient.answer('gone');
    const first = await queue([recipient]);
    start();
    await settled(first.ids);
    const subscriber = await query(`SELECT status FROM subscribers WHERE id = $1`, [recipient.subscriberId]);
    const addresses = await query(`SELECT sandbox, channel, address, status, status_reason, source FROM channel_addresses WHERE project_id = $1 AND address = $2`, [
      tenant.projectId,
      recipient.destination ?? '',
    ]);
    if (recipient.destination === undefined) {
      expect(subscriber).toEqual([{ status: 'unsubscribed' }]);
    } else {
      // The person's push device is untouched: only the number is unreachable, and only on this channel.
      expect(subscriber).toEqual([{ status: 'active' }]);
      // On email a dead address is a hard bounce, the suppression list's word; other channels keep the provider's code.
      const reason = harness.channel === 'email' ? 'bounced' : gone.code;
      expect(addresses).toEqual([{ sandbox: false, channel: harness.channel, address: recipient.destination, status: gone.status ?? 'unreachable', status_reason: reason, source: 'provider' }]);
    }
    const second = await queue([recipient]);
    expect((await settled(second.ids))[0]).toMatchObject({ status: 'failed' });
    expect(recipient.received()).toBe(1);
  });

  it("records the provider's message id of each accepted message", async () => {
    const recipients = await Promise.all([harness.recipient(), harness.recipient()]);
    const { messageId, ids } = await queue(recipients);
    start();
    const rows = await settled(ids);
    const { providerMessageId } = harness;
    if (providerMessageId) {
      expect(rows.map((r) => r.provider_message_id)).toEqual(ids.map((deliveryId, i) => providerMessageId({ deliveryId, messageId, subscriberId: recipients[i]!.subscriberId })));
    } else {
      // Web push names nothing Herald needs back (it has no callbacks): nothing is stored.
      expect(rows.map((r) => r.provider_message_id)).toEqual([null, null]);
    }
  });

  it('validates content before anything is queued: what fits passes, what the channel cannot send is named', () => {
    expect(harness.adapter.validate(harness.content)).toBeUndefined();
    expect(harness.adapter.validate(harness.unsendable.content)).toEqual(harness.unsendable.problems);
  });
});

/** One message on `channel` queued to `recipients`; returns the delivery ids. */
async function queueOn(channel: Channel, recipients: Recipient[], body = 'Hello'): Promise<number[]> {
  const messageId = newId('msg');
  await query(`INSERT INTO messages (id, project_id, channel, source, sandbox, content, options) VALUES ($1, $2, $3, 'campaign', false, $4, '{}')`, [
    messageId,
    tenant.projectId,
    channel,
    { title: 'Hi', body },
  ]);
  const ids: number[] = [];
  for (const { subscriberId, destination } of recipients) {
    const [row] = await query<{ id: number }>(
      `INSERT INTO deliveries (project_id, message_id, subscriber_id, channel, destination) VALUES ($1, $2, $3, $4, $5) RETURNING id::float8 AS id`,
      [tenant.projectId, messageId, subscriberId, channel, destination ?? null],
    );
    ids.push(row!.id);
  }
  return ids;
}

const statusesOf = async (ids: number[]) => (await Promise.all(ids.map(rowOf))).map((r) => r.status);

describe('lanes', () => {
  it('a slow provider holds no more than its lane, and another channel goes on meanwhile', async () => {
    let release!: () => void;
    const slow = fakeHarness([], { channel: 'email', gate: new Promise<void>((resolve) => (release = resolve)) });
    const fast = fakeHarness([], { channel: 'sms' });
    const laneConfig = loadConfig({ DELIVERY_POLL_INTERVAL_MS: '50', DELIVERY_BATCH_SIZE: '2', DELIVERY_EMAIL_CONCURRENCY: '4' });
    const slowIds = await queueOn('email', await Promise.all(Array.from({ length: 10 }, () => slow.recipient())));
    const fastIds = await queueOn('sms', await Promise.all(Array.from({ length: 6 }, () => fast.recipient())));
    const engine = new DeliveryEngine({
      db: t.database.db,
      config: laneConfig,
      adapters: [slow.adapter, fast.adapter],
      openCredentials: (sealed) => t.services.channels.open(sealed),
    });
    engine.start();
    try {
      expect(await until(() => statusesOf(fastIds), (s) => s.every((x) => x === 'sent'))).toHaveLength(6);
      const slowStatuses = await statusesOf(slowIds);
      expect(slowStatuses.filter((s) => s === 'sending')).toHaveLength(4);
      expect(slowStatuses.filter((s) => s === 'queued')).toHaveLength(6);
      expect(slow.inFlight.max).toBe(4);
      release();
      expect(await until(() => statusesOf(slowIds), (s) => s.every((x) => x === 'sent'))).toHaveLength(10);
      expect(slow.inFlight.max).toBe(4);
    } finally {
      release();
      await engine.stop();
    }
  });

  it('a channel with no adapter in this worker is not claimed: its deliveries wait for a worker that has one', async () => {
    const batches: number[] = [];
    const harness = fakeHarness(batches);
    const recipient = await harness.recipient();
    const [waiting] = await queueOn('whatsapp', [recipient]);
    const [going] = await queueOn('sms', [recipient]);
    const engine = new DeliveryEngine({ db: t.database.db, config, adapters: [harness.adapter], openCredentials: (sealed) => t.services.channels.open(sealed) });
    engine.start();
    try {
      await until(() => rowOf(going!), (r) => r.status === 'sent');
      expect(await rowOf(waiting!)).toMatchObject({ status: 'queued', attempts: 0 });
      expect(batches).toEqual([1]);
    } finally {
      await engine.stop();
      await query(`DELETE FROM deliveries WHERE id = $1`, [waiting]);
    }
  });
});

/** The most of `times` (milliseconds) that fall within any one second. */
const busiestSecond = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  return Math.max(...sorted.map((start, i) => sorted.slice(i).filter((at) => at < start + 1000).length));
};

describe('provider rates', () => {
  const redisUrl = process.env.HERALD_TEST_REDIS_URL;
  let redis: Redis | undefined;
  beforeAll(() => {
    if (redisUrl) redis = new Redis(redisUrl);
  });
  afterAll(async () => {
    await redis?.quit();
  });
  const sender = () => `fake:+1555${randomBytes(4).readUInt32BE() % 10_000_000}`;
  const rowsOf = (ids: number[]) =>
    query<{ status: string; attempts: number; provider_code: string | null }>(`SELECT status, attempts, provider_code FROM deliveries WHERE id = ANY($1) ORDER BY id`, [ids]);

  /** Two workers send 15 deliveries drawing from one 5/s rate held in `sendRate`; returns the rate's key. */
  async function twoWorkersAtFivePerSecond(sendRate: () => SendRate | undefined): Promise<string> {
    const key = sender();
    const fake = fakeHarness([], { rate: { key, perSecond: 5 } });
    const ids = await queueOn('sms', await Promise.all(Array.from({ length: 15 }, () => fake.recipient())));
    const workers = [0, 1].map(
      () => new DeliveryEngine({ db: t.database.db, config, adapters: [fake.adapter], sendRate: sendRate(), openCredentials: (sealed) => t.services.channels.open(sealed) }),
    );
    for (const worker of workers) worker.start();
    try {
      // A held delivery shows as one: back in the queue, its attempt not counted, the rate named.
      await until(() => rowsOf(ids), (rows) => rows.some((r) => r.status === 'queued' && r.attempts === 0 && r.provider_code === SEND_RATE_CODE));
      const rows = await until(() => rowsOf(ids), (all) => all.every((r) => r.status === 'sent'), 20_000);
      expect(rows.map((r) => r.attempts)).toEqual(ids.map(() => 1));
      expect(fake.receivedAt).toHaveLength(15);
      // Five slots a second, plus one for a second that starts on a slot and ends on another.
      expect(busiestSecond(fake.receivedAt)).toBeLessThanOrEqual(6);
    } finally {
      await Promise.all(workers.map((worker) => worker.stop()));
    }
    return key;
  }

  it("two workers together keep a sender's rate of 5/s in PostgreSQL, holding the rest without counting attempts", async () => {
    const key = await twoWorkersAtFivePerSecond(() => undefined);
    expect(await query(`SELECT key FROM send_rates WHERE key = $1`, [key])).toEqual([{ key }]);
  });

  it.skipIf(!redisUrl)("two workers together keep a sender's rate of 5/s in Redis, holding the rest without counting attempts", async () => {
    const key = await twoWorkersAtFivePerSecond(() => redisSendRate(redis!));
    expect(await redis!.exists(`herald:send-rate:${key}`)).toBe(1);
    expect(await query(`SELECT key FROM send_rates WHERE key = $1`, [key])).toEqual([]);
  });

  it('the transactional path waits for its slots within its retry budget, and fails what would wait longer', async () => {
    const fake = fakeHarness([], { rate: { key: sender(), perSecond: 2 } });
    const ids = await queueOn('sms', await Promise.all(Array.from({ length: 4 }, () => fake.recipient())));
    const engine = new DeliveryEngine({
      db: t.database.db,
      config: loadConfig({ TRANSACTIONAL_RETRY_BUDGET_MS: '1200' }),
      adapters: [fake.adapter],
      openCredentials: (sealed) => t.services.channels.open(sealed),
    });
    const claimed = await claimDue(t.database.db, 'sms', 4, 60);
    const [message] = await findMessages(t.database.db, [claimed[0]!.messageId]);
    const project = (await engine.sendingProjects([tenant.projectId])).get(tenant.projectId)!;
    const results = await engine.deliverNow(claimed, message!, project);
    // Slots at 0, 500 and 1000 ms fit the budget; the fourth, at 1500 ms, does not.
    expect(results.map((r) => [r.status, r.reason]).sort()).toEqual([
      ['failed', 'provider_error'],
      ['sent', null],
      ['sent', null],
      ['sent', null],
    ]);
    const rows = await rowsOf(ids);
    expect(rows.map((r) => r.attempts)).toEqual([1, 1, 1, 1]);
    expect(rows.filter((r) => r.status === 'failed').map((r) => r.provider_code)).toEqual([SEND_RATE_CODE]);
    expect(busiestSecond(fake.receivedAt)).toBeLessThanOrEqual(3);
    expect(Math.min(...fake.receivedAt.slice(1).map((at, i) => at - fake.receivedAt[i]!))).toBeGreaterThanOrEqual(450);
  });
});

describe('provider callbacks', () => {
  const secret = 'fake-webhook-secret';
  const delivery = async (id: number) =>
    (await query<{ status: string; delivered_at: Date | null }>(`SELECT status, delivered_at FROM deliveries WHERE id = $1`, [id]))[0];
  const eventsOf = (ids: number[]) =>
    query<{ delivery_id: number; type: string }>(`SELECT delivery_id::float8 AS delivery_id, type FROM delivery_events WHERE delivery_id = ANY($1) ORDER BY delivery_id, type`, [ids]);
  const statsOf = async (messageId: string) =>
    (await query(`SELECT sent, delivered, bounced, complained FROM message_stats WHERE message_id = $1`, [messageId]))[0];

  it('a signed callback is applied exactly once, however often it comes; a forged one is refused and changes nothing', async () => {
    const harness = fakeHarness([]);
    const recipients = await Promise.all([harness.recipient(), harness.recipient(), harness.recipient()]);
    const ids = await queueOn('sms', recipients);
    const [{ message_id: messageId }] = (await query<{ message_id: string }>(`SELECT message_id FROM deliveries WHERE id = $1`, [ids[0]])) as [{ message_id: string }];
    await query(`INSERT INTO message_stats (message_id, queued) VALUES ($1, 3)`, [messageId]);
    const engine = new DeliveryEngine({ db: t.database.db, config, adapters: [harness.adapter], openCredentials: (sealed) => t.services.channels.open(sealed) });
    engine.start();
    try {
      await until(() => statusesOf(ids), (s) => s.every((x) => x === 'sent'));
    } finally {
      await engine.stop();
    }
    const refs = await query<{ provider_message_id: string }>(`SELECT provider_message_id FROM deliveries WHERE id = ANY($1) ORDER BY id`, [ids]);
    const [first, second] = refs.map((r) => r.provider_message_id);
    const rawBody = Buffer.from(
      JSON.stringify({
        events: [
          { id: first, event: 'delivered', at: '2026-11-20T10:00:00Z' },
          { id: second, event: 'bounced', at: '2026-11-20T10:00:01Z' },
          { id: first, event: 'clicked', at: '2026-11-20T10:00:03Z' },
          { id: 'fake-not-ours', event: 'delivered', at: '2026-11-20T10:00:02Z' },
        ],
      }),
    );
    const callback = async (body: Buffer, signature: string) => {
      const parsed = await harness.adapter.webhooks!.fake!.verifyAndParse(
        { url: 'https://herald.example.com/webhooks/sms', headers: { [FAKE_SIGNATURE]: signature }, rawBody: body },
        { webhookSecret: secret },
      );
      if ('refused' in parsed) return parsed;
      const { applied, unknown } = await applyProviderEvents(t.database.db, { projectId: tenant.projectId, channel: 'sms' }, parsed.events);
      return { applied, unknown };
    };

    expect(await callback(rawBody, fakeSignature(secret, rawBody))).toEqual({ applied: 3, unknown: 1 });
    const once = {
      statuses: await statusesOf(ids),
      events: await eventsOf(ids),
      stats: await statsOf(messageId),
    };
    expect(once).toEqual({
      statuses: ['clicked', 'bounced', 'sent'],
      events: [
        { delivery_id: ids[0], type: 'delivered' },
        { delivery_id: ids[0], type: 'clicked' },
        { delivery_id: ids[1], type: 'bounced' },
      ],
      stats: { sent: 3, delivered: 1, bounced: 1, complained: 0 },
    });
    expect((await delivery(ids[0]!))!.delivered_at).toEqual(new Date('2026-11-20T10:00:00Z'));

    // The provider retries its callback: applied again, nothing moves.
    expect(await callback(rawBody, fakeSignature(secret, rawBody))).toEqual({ applied: 3, unknown: 1 });
    expect({ statuses: await statusesOf(ids), events: await eventsOf(ids), stats: await statsOf(messageId) }).toEqual(once);

    // A forged callback — another secret, or a body the signature was not made over — is refused before it is read.
    const forged = Buffer.from(JSON.stringify({ events: [{ id: refs[2]!.provider_message_id, event: 'complained', at: '2026-11-20T11:00:00Z' }] }));
    expect(await callback(forged, fakeSignature('not-the-secret', forged))).toEqual({ refused: 'bad_signature' });
    expect(await callback(forged, fakeSignature(secret, rawBody))).toEqual({ refused: 'bad_signature' });
    expect(await callback(forged, '')).toEqual({ refused: 'bad_signature' });
    expect({ statuses: await statusesOf(ids), events: await eventsOf(ids), stats: await statsOf(messageId) }).toEqual(once);

    // Another click, later: logged, and it moves nothing.
    const again = Buffer.from(JSON.stringify({ events: [{ id: first, event: 'clicked', at: '2026-11-20T10:05:00Z' }] }));
    expect(await callback(again, fakeSignature(secret, again))).toEqual({ applied: 1, unknown: 0 });
    expect({ statuses: await statusesOf(ids), events: await eventsOf(ids), stats: await statsOf(messageId) }).toEqual({
      ...once,
      events: [once.events[0], once.events[1], { delivery_id: ids[0], type: 'clicked' }, once.events[2]],
    });
  });
});

describe('bulk sends', () => {
  it('a bulk provider gets one call per shared body, and each item of it its own outcome', async () => {
    const batches: number[] = [];
    const harness = fakeHarness(batches, { bulk: true });
    const recipients = await Promise.all(Array.from({ length: 6 }, () => harness.recipient()));
    recipients[4]!.answer('refused');
    const welcome = await queueOn('sms', recipients.slice(0, 3), 'Welcome');
    const reminder = await queueOn('sms', recipients.slice(3), 'Reminder');
    const engine = new DeliveryEngine({ db: t.database.db, config, adapters: [harness.adapter], openCredentials: (sealed) => t.services.channels.open(sealed) });
    engine.start();
    try {
      await until(() => statusesOf([...welcome, ...reminder]), (s) => s.every((x) => !['queued', 'sending'].includes(x)));
    } finally {
      await engine.stop();
    }
    // Six deliveries, one claim (DELIVERY_BATCH_SIZE is 10), two bodies: two calls.
    expect(harness.bodies.map((call) => [...new Set(call)])).toEqual(expect.arrayContaining([['Welcome'], ['Reminder']]));
    expect(batches.sort()).toEqual([3, 3]);
    const rows = await Promise.all([...welcome, ...reminder].map(rowOf));
    expect(rows.map((r) => [r.status, r.reason])).toEqual([
      ['sent', null],
      ['sent', null],
      ['sent', null],
      ['sent', null],
      ['failed', 'provider_error'],
      ['sent', null],
    ]);
    expect(rows.map((r) => r.provider_message_id)).toEqual([...welcome, ...reminder].map((id, i) => (i === 4 ? null : `fake-${id}-1`)));
  });
});
