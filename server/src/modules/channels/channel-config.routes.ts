// A project's channel configurations: which provider each channel uses, its settings, and credentials set but never shown.
import { z } from 'zod';
import { CHANNELS } from '../../db/schema.js';
import { SMTP_TLS_MODES } from '../../delivery/index.js';
import { projectOf } from '../../http/access.js';
import { commonErrors, errorEnvelope, timestamp } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { ChannelConfigService } from './channel-config.service.js';

const tags = ['Channels'];
const idParams = z.object({ id: z.string() });
// A DNS name, or an IPv4 or bracket-free IPv6 address.
const HOST_NAME = /^(([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*|[0-9a-f:.]+)$/i;
const base64url = (what: string) => z.string().regex(/^[A-Za-z0-9_-]+$/, `must be base64url: ${what}`);

const channelConfig = z
  .object({
    channel: z.enum(CHANNELS),
    provider: z.string().describe('`web-push` for push; `smtp` or `ses` for email (`none` until chosen); `twilio` for SMS; `meta` or `twilio` for WhatsApp'),
    settings: z
      .record(z.string(), z.unknown())
      .describe(
        "What may be shown, e.g. `vapidPublicKey`; on WhatsApp with Meta `phoneNumberId`, `wabaId`, `displayPhoneNumber`, `verifiedName` and " +
          "`webhookUrl`, the callback URL to paste into Meta's console; on SMS, and WhatsApp with Twilio, `accountSid` (and the sender: `from`, " +
          "`messagingServiceSid`), `inboundUrl`, the incoming-message webhook to paste into Twilio's console, and `statusCallbackUrl`, named in each message",
      ),
    credentials: z
      .array(z.string())
      .describe('The names of the credentials set (e.g. `vapidPrivateKey`): their values are sealed at rest and never returned'),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'ChannelConfig' });

const twilioAccountSid = z.string().regex(/^AC[0-9a-f]{32}$/, 'must be a Twilio account SID (AC…)').describe('The Twilio account (shown)');
const twilioMessagingServiceSid = z.string().regex(/^MG[0-9a-f]{32}$/, 'must be a Twilio Messaging Service SID (MG…)');
const twilioCredentials = z
  .strictObject({
    authToken: z.string().regex(/^[0-9a-f]{32}$/, 'must be a Twilio auth token (32 hex digits)'),
    apiKeySid: z.string().regex(/^SK[0-9a-f]{32}$/, 'must be a Twilio API key SID (SK…)').optional(),
    apiKeySecret: z.string().min(16).max(128).optional(),
  })
  .refine((c) => (c.apiKeySid === undefined) === (c.apiKeySecret === undefined), 'give apiKeySid and apiKeySecret together, or neither')
  .describe('The auth token (signs callbacks; logs in without an API key) and optionally an API key to send with');

export async function channelConfigRoutes(app: App, channels: ChannelConfigService) {
  app.get(
    '/projects/:id/channels',
    {
      config: { access: { auth: 'project', project: 'params.id' } },
      schema: {
        tags,
        summary: "The project's channel configurations (credentials by name only)",
        params: idParams,
        response: { 200: z.object({ data: z.array(channelConfig) }), ...commonErrors },
      },
    },
    (request) => channels.list(projectOf(request)),
  );

  app.put(
    '/projects/:id/channels/push',
    {
      config: { access: { auth: 'project', credentials: 'jwt', project: 'params.id', minRole: 'ADMIN' } },
      schema: {
        tags,
        summary: "Bring the project's own VAPID key pair (OWNER or ADMIN), e.g. when moving from another push service",
        description:
          'Browsers subscribed with this public key (on the other service) keep receiving pushes once their subscriptions ' +
          'are imported; those subscribed with the key Herald generated stop, until they subscribe again (the SDK does ' +
          'so on their next visit). The private key is sealed at rest with HERALD_SECRET_KEY and never returned. A pair ' +
          'whose halves do not match → 422 naming credentials.vapidPrivateKey.',
        params: idParams,
        body: z.strictObject({
          settings: z.strictObject({ vapidPublicKey: base64url('the uncompressed P-256 public point (65 bytes)') }),
          credentials: z.strictObject({ vapidPrivateKey: base64url('the P-256 private scalar (32 bytes)') }),
        }),
        response: { 200: channelConfig, ...commonErrors },
      },
    },
    (request) =>
      channels.setPush(projectOf(request), {
        publicKey: request.body.settings.vapidPublicKey,
        privateKey: request.body.credentials.vapidPrivateKey,
      }),
  );

  app.put(
    '/projects/:id/channels/email',
    {
      config: { access: { auth: 'project', credentials: 'jwt', project: 'params.id', minRole: 'ADMIN' } },
      schema: {
        tags,
        summary: "Choose the project's email provider (OWNER or ADMIN): an SMTP server, or an Amazon SES account",
        description:
          'Replaces the previous provider; the project\'s sending domain (`emailConfig.domain`) stays. Credentials are sealed ' +
          'at rest with HERALD_SECRET_KEY and never returned: the answer names the credentials set. Email deliveries claimed ' +
          'after the answer go through this account (SMTP connections pooled per server and account). `ratePerSecond` is the ' +
          'account\'s rate, held across every worker (sends over it wait in the queue).\n\n' +
          '**SES** (API v2): Herald first reads the account with its credentials (`GetAccount`); a refusal (wrong keys, a ' +
          'region the account does not use, sending disabled) is a 422 naming what SES said. Its maximum send rate holds (a ' +
          'lower `ratePerSecond` may be asked for), and an account still in the SES sandbox is held to spec 8: 200 messages per ' +
          '24 hours and 1 per second across every worker; what is over waits with reason `sandbox_limit_reached` (a ' +
          'transactional send fails with it). The answer\'s settings show what SES reported (`sandbox`, `ratePerSecond`, ' +
          '`per24Hours`, `checkedAt`); choose the provider again after SES grants production access. Messages are composed ' +
          'and DKIM-signed by Herald with the sending domain\'s key (Message-ID and Date unsigned: SES replaces them) and sent ' +
          'raw; `configurationSet` names the SES configuration set whose events go to `POST /email/ses-webhook` through SNS.\n\n' +
          '**SMTP**: the host must be public (resolved when saved, checked again at every connection), unless the operator ' +
          'allowed it with OUTBOUND_ALLOWED_HOSTS; `tls` says how connections are encrypted, `required` by default. The answer\'s ' +
          'settings show the `tls` chosen. `sandbox: true` holds an account its provider keeps in a sandbox to the same limits.\n\n' +
          'Without a provider, live email deliveries fail with `provider_not_configured`.',
        params: idParams,
        body: z.discriminatedUnion('provider', [
          z.strictObject({
            provider: z.literal('smtp'),
            settings: z.strictObject({
              host: z
                .string()
                .regex(HOST_NAME, 'must be a host name or an IP address')
                .describe(
                  'The SMTP server: a public host. A loopback, private, link-local, unique-local or cloud metadata address (or a ' +
                    'name resolving to one) → 422 naming settings.host, unless the operator allowed it (OUTBOUND_ALLOWED_HOSTS); ' +
                    'sends check the address again as they connect',
                ),
              port: z.number().int().min(1).max(65535).describe('Usually 587 (STARTTLS) or 465 (TLS)'),
              tls: z
                .enum(SMTP_TLS_MODES)
                .optional()
                .describe(
                  '`required` (the default): STARTTLS with a valid certificate, or the message is not sent (provider code ' +
                    '`smtp_tls_unavailable`); `opportunistic`: STARTTLS when the server offers it, else in the clear (the default ' +
                    'on a host the operator allowed); `implicit`: TLS from the first byte (port 465)',
                ),
              secure: z.boolean().optional().describe('The older form: true is `tls: implicit`; false leaves `tls` to its default'),
              ratePerSecond: z.number().positive().max(100_000).optional().describe("The account's sends per second, if it has a limit"),
              sandbox: z.boolean().optional().describe("The account is in its provider's sandbox: 200 messages per 24 hours, 1 per second"),
            }),
            credentials: z
              .strictObject({ user: z.string().min(1).max(255), pass: z.string().min(1).max(1024) })
              .optional()
              .describe('The account; leave out for a relay that takes mail without logging in'),
          }),
          z.strictObject({
            provider: z.literal('ses'),
            settings: z.strictObject({
              region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region such as eu-west-1').describe('The SES region the account sends from'),
              configurationSet: z
                .string()
                .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an SES configuration set name')
                .optional()
                .describe('The configuration set whose event destination is SNS → `POST /email/ses-webhook`'),
              ratePerSecond: z.number().positive().max(100_000).optional().describe("A rate below the account's maximum send rate, if wanted"),
            }),
            credentials: z
              .strictObject({
                accessKeyId: z.string().regex(/^[A-Z0-9]{16,128}$/, 'must be an AWS access key id'),
                secretAccessKey: z.string().min(16).max(128),
              })
              .describe('An IAM access key allowed ses:SendEmail, ses:SendRawEmail and ses:GetAccount'),
          }),
        ]),
        response: { 200: channelConfig, ...commonErrors },
      },
    },
    (request) => channels.setEmail(projectOf(request), request.body),
  );

  app.put(
    '/projects/:id/channels/whatsapp',
    {
      config: { access: { auth: 'project', credentials: 'jwt', project: 'params.id', minRole: 'ADMIN' } },
      schema: {
        tags,
        summary: "Choose the project's WhatsApp provider (OWNER or ADMIN): a phone number on Meta's WhatsApp Cloud API, or a Twilio WhatsApp sender",
        description:
          'Replaces the previous provider. Secrets are sealed at rest with HERALD_SECRET_KEY and never returned: the answer ' +
          'names the credentials set. Herald asks the provider before saving: a refusal is a 422 naming the field and quoting ' +
          'the provider, a provider that cannot be reached a 502, and nothing is saved. Without a provider, live WhatsApp ' +
          'sends fail with `provider_not_configured`.\n\n' +
          "**Meta** (`provider: meta`): `accessToken` (a system user token with whatsapp_business_messaging and " +
          "whatsapp_business_management), `appSecret` (the Meta app's secret: it signs callbacks) and `verifyToken` (any " +
          "secret of your choosing, typed again in Meta's console). Herald first reads the phone number " +
          '(`GET WHATSAPP_GRAPH_URL/WHATSAPP_GRAPH_VERSION/{phoneNumberId}` with the token): a token Meta refuses → 422 on ' +
          '`credentials.accessToken`, a phone number id it does not know for that token → 422 on `settings.phoneNumberId`; ' +
          "the answer's settings show `displayPhoneNumber` and `verifiedName` as Meta gave them. `settings.webhookUrl` is the " +
          "callback URL to paste into the Meta app's WhatsApp webhook configuration with the same verify token; subscribe it " +
          'to the `messages` field. Messages go to `/{phoneNumberId}/messages`; templates are read from ' +
          '`/{wabaId}/message_templates` (POST /projects/{id}/whatsapp-templates/sync).\n\n' +
          '**Twilio** (`provider: twilio`): the account (`accountSid`; `authToken`, which also checks Twilio\'s signatures, and ' +
          'optionally an API key to send with) and the WhatsApp-enabled sender — its number `from` (sent as ' +
          '`From=whatsapp:+…`) or a Messaging Service `messagingServiceSid` whose sender pool holds it. Herald first reads the ' +
          'account (`GET TWILIO_BASE_URL/2010-04-01/Accounts/{accountSid}.json`, with the API key when one is given, and with ' +
          'the auth token): credentials Twilio refuses → 422 on `credentials.apiKeySid` or `credentials.authToken`, an account ' +
          'not active → 422 on `settings.accountSid`. Messages ' +
          'go through the Messages API with `To=whatsapp:+…`: free-form text as `Body`, a template as `ContentSid` (the ' +
          "registry's `providerTemplateId` for that name and language, written by hand: there is no sync) and " +
          '`ContentVariables`. Point the sender\'s **incoming message** webhook at the answer\'s `settings.inboundUrl` ' +
          '(`{PUBLIC_URL}/whatsapp/twilio/inbound/{projectId}`): messages open the 24-hour window, STOP and START work as ' +
          "on Meta's webhook. Status callbacks need no setting: each message names `settings.statusCallbackUrl` with its delivery.",
        params: idParams,
        body: z.discriminatedUnion('provider', [
          z.strictObject({
            provider: z.literal('meta'),
            settings: z.strictObject({
              phoneNumberId: z.string().regex(/^\d{5,30}$/, 'must be the digits of a Cloud API phone number id').describe('The business phone number\'s id (not the number itself)'),
              wabaId: z.string().regex(/^\d{5,30}$/, 'must be the digits of a WhatsApp Business Account id').describe('The WhatsApp Business Account id, whose templates are synchronised'),
            }),
            credentials: z.strictObject({
              accessToken: z.string().min(10).max(1024).describe('Bearer token of the Graph API'),
              appSecret: z.string().min(16).max(256).describe("The Meta app's secret: callbacks carry X-Hub-Signature-256, its HMAC-SHA256 of the raw body"),
              verifyToken: z.string().min(8).max(256).describe("Echoed check of Meta's verification GET (hub.verify_token)"),
            }),
          }),
          z.strictObject({
            provider: z.literal('twilio'),
            settings: z
              .strictObject({
                accountSid: twilioAccountSid,
                from: z.string().regex(/^\+[1-9]\d{6,14}$/, 'must be the WhatsApp sender\'s number in E.164 (+…)').optional().describe('The WhatsApp-enabled sender number (shown)'),
                messagingServiceSid: twilioMessagingServiceSid.optional().describe('A Messaging Service whose sender pool holds the WhatsApp sender'),
              })
              .refine((settings) => (settings.from === undefined) !== (settings.messagingServiceSid === undefined), {
                message: 'give the sender number (from) or a messagingServiceSid, one of them',
                path: ['from'],
              }),
            credentials: twilioCredentials,
          }),
        ]),
        response: { 200: channelConfig, ...commonErrors, 502: errorEnvelope },
      },
    },
    (request) => channels.setWhatsApp(projectOf(request), request.body),
  );

  app.put(
    '/projects/:id/channels/sms',
    {
      config: { access: { auth: 'project', credentials: 'jwt', project: 'params.id', minRole: 'ADMIN' } },
      schema: {
        tags,
        summary: "Choose the project's SMS provider (OWNER or ADMIN): a Twilio account",
        description:
          'Replaces the previous provider. Credentials are sealed at rest with HERALD_SECRET_KEY and never returned: the answer ' +
          'names the credentials set. Sends log in with the API key when one is given, else with the account SID and auth ' +
          "token; the auth token is always needed, as Twilio signs its callbacks with it (`X-Twilio-Signature`).\n\n" +
          'Twilio is asked before anything is saved, as for a Twilio WhatsApp sender: the account is read ' +
          '(`GET TWILIO_BASE_URL/2010-04-01/Accounts/{accountSid}.json`) with the API key when one is given, and with the ' +
          'auth token. Credentials Twilio refuses (401, its 20003) → 422 on `credentials.apiKeySid` or ' +
          '`credentials.authToken`, an account not active → 422 on `settings.accountSid`, Twilio out of reach → 502 ' +
          '`provider_error`; nothing is saved.\n\n' +
          'Point the numbers\' (or the Messaging Service\'s) **incoming message** webhook at `POST {PUBLIC_URL}/sms/twilio/inbound/{projectId}` (the answer\'s `settings.inboundUrl`): ' +
          'STOP, STOPALL, UNSUBSCRIBE, CANCEL, END and QUIT opt the number out of SMS, START, UNSTOP and YES opt it back in, ' +
          'and HELP is answered with `helpReply` when it is set (otherwise Herald answers nothing and Twilio\'s Advanced ' +
          'Opt-Out reply, if enabled, stands). Status callbacks need no setting: each message names ' +
          '`{PUBLIC_URL}/sms/twilio/status/{projectId}`.\n\n' +
          'Senders are provisioned per country (`POST /projects/{id}/channels/sms/senders`); `messagingServiceSid` is what ' +
          'sends to a country without one go through (Twilio picks the number from the service\'s pool). Without a provider, ' +
          'live SMS fail with `provider_not_configured`.',
        params: idParams,
        body: z.strictObject({
          provider: z.literal('twilio'),
          settings: z.strictObject({
            accountSid: twilioAccountSid,
            messagingServiceSid: twilioMessagingServiceSid
              .optional()
              .describe('Sends to a country with no provisioned sender go through this Messaging Service'),
            messagingServiceRatePerSecond: z
              .number()
              .int()
              .min(1)
              .max(10_000)
              .optional()
              .describe("The Messaging Service's sends per second across every worker (default 1: one long code)"),
            helpReply: z.string().trim().min(1).max(320).optional().describe("Herald's answer to an inbound HELP; unset: none (Twilio's own, if enabled)"),
          }),
          credentials: twilioCredentials,
        }),
        response: { 200: channelConfig, ...commonErrors, 502: errorEnvelope },
      },
    },
    (request) => channels.setSms(projectOf(request), request.body),
  );
}
