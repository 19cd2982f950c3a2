// Channel configurations: each channel's provider for a project, its settings, and its credentials sealed at rest.
import type { Db } from '../../db/database.js';
import { notifyProjectChange, type ForgetProject } from '../../db/project-changes.js';
import type { Channel } from '../../db/schema.js';
import { createOutboundGuard, type OutboundGuard, type SmtpTls } from '../../delivery/index.js';
import { AppError, validationFailed } from '../../shared/errors.js';
import type { ProjectScope } from '../tenancy.js';
import * as repo from './channel-config.repository.js';
import type { Keyring } from './secret-keyring.js';
import { generateVapidKeys, vapidPairProblem, type VapidKeys } from './vapid.js';

/** What the API shows of a configuration: credentials by name only, never their values. */
export interface ChannelConfigView {
  channel: Channel;
  provider: string;
  settings: Record<string, unknown>;
  credentials: string[];
  createdAt: string;
  updatedAt: string;
}

/** Account limits any email provider may declare; SES reports its own (`GetAccount`) when it is chosen. */
interface EmailLimits {
  /** The account's documented sends per second, held across every worker. */
  ratePerSecond?: number | undefined;
  /** The account is in its provider's sandbox: held to 200 messages per 24 hours and 1 per second (spec 8). */
  sandbox?: boolean | undefined;
}

/** An email provider as `PUT /projects/:id/channels/email` takes it. */
export type EmailProviderInput =
  | {
      provider: 'smtp';
      /** `secure: true` (the older form) is `tls: implicit`; neither given, `required` (`opportunistic` on an operator-allowed host). */
      settings: { host: string; port: number; tls?: SmtpTls | undefined; secure?: boolean | undefined } & EmailLimits;
      /** None for a relay that takes mail without logging in. */
      credentials?: { user: string; pass: string } | undefined;
    }
  | {
      provider: 'ses';
      settings: { region: string; configurationSet?: string | undefined; ratePerSecond?: number | undefined };
      credentials: { accessKeyId: string; secretAccessKey: string };
    };

/** A Twilio account's credentials: the auth token signs Twilio's callbacks; an API key, when given, is what sends log in with. */
export interface TwilioCredentials {
  authToken: string;
  apiKeySid?: string | undefined;
  apiKeySecret?: string | undefined;
}

/** A WhatsApp provider as `PUT /projects/:id/channels/whatsapp` takes it: Meta's Cloud API, or a Twilio WhatsApp sender. */
export type WhatsAppProviderInput =
  | {
      provider: 'meta';
      settings: { phoneNumberId: string; wabaId: string };
      credentials: { accessToken: string; appSecret: string; verifyToken: string };
    }
  | {
      provider: 'twilio';
      /** The WhatsApp-enabled sender's number (E.164), or the Messaging Service whose sender pool holds it. */
      settings: { accountSid: string; from?: string | undefined; messagingServiceSid?: string | undefined };
      credentials: TwilioCredentials;
    };

/** An SMS provider as `PUT /projects/:id/channels/sms` takes it. */
export interface SmsProviderInput {
  provider: 'twilio';
  settings: {
    accountSid: string;
    messagingServiceSid?: string | undefined;
    /** The Messaging Service's sends per second, held across every worker. */
    messagingServiceRatePerSecond?: number | undefined;
    /** Herald's answer to HELP; unset, Herald answers nothing and Twilio's own HELP reply (if enabled) stands. */
    helpReply?: string | undefined;
  };
  credentials: TwilioCredentials;
}

/** What reading a provider account said (`delivery/channels/…`): facts to keep, or who refused. */
export type AccountCheck<Facts> = ({ ok: true } & Facts) | { ok: false; refused: string; message: string };

/** What SES says of an account (`delivery/channels/email/ses-provider.ts`). */
export interface SesAccountFacts {
  sandbox: boolean;
  ratePerSecond: number;
  per24Hours: number;
  sendingEnabled: boolean;
}

export interface ChannelConfigOptions {
  /** Told a project's sending settings changed: caches drop them. */
  forget?: ForgetProject;
  /** Asks SES about an account with its credentials; a refusal is thrown as SES gave it. */
  readSesAccount?: (account: { region: string; accessKeyId: string; secretAccessKey: string }) => Promise<SesAccountFacts>;
  /** PUBLIC_URL: the WhatsApp and Twilio callback URLs shown to paste into their consoles are under it. */
  publicUrl?: string;
  /** Reads a Cloud API phone number with the token (`refused`: `token`, `phone_number` or `unreachable`). */
  readPhoneNumber?: (account: { phoneNumberId: string; accessToken: string }) => Promise<AccountCheck<{ displayPhoneNumber: string | undefined; verifiedName: string | undefined }>>;
  /** Reads a Twilio account with its credentials (`refused`: `credentials` or `unreachable`). */
  readTwilioAccount?: (account: { accountSid: string; credentials: Record<string, string> }) => Promise<AccountCheck<{ status: string }>>;
  /** Where an SMTP server may be (OUTBOUND_ALLOWED_HOSTS); without one, public addresses only. */
  outboundGuard?: OutboundGuard;
}

/** Where Meta calls back for a project (verification GET, then signed POSTs). */
export const whatsappWebhookUrl = (publicUrl: string, projectId: string) => `${publicUrl}/whatsapp/webhook/${encodeURIComponent(projectId)}`;

/**
 * Where Twilio posts a project's inbound messages (set in its console: on the SMS numbers, or on the WhatsApp sender)
 * and its status changes (named in each message, with the delivery).
 */
export const twilioWebhookUrls = (publicUrl: string, channel: 'sms' | 'whatsapp', projectId: string) => ({
  inboundUrl: `${publicUrl}/${channel}/twilio/inbound/${encodeURIComponent(projectId)}`,
  statusCallbackUrl: `${publicUrl}/${channel}/twilio/status/${encodeURIComponent(projectId)}`,
});

export class ChannelConfigService {
  private readonly forget: ForgetProject;
  private readonly outboundGuard: OutboundGuard;

  constructor(
    private readonly db: Db,
    private readonly keyring: Keyring,
    private readonly options: ChannelConfigOptions = {},
  ) {
    this.forget = options.forget ?? (() => undefined);
    this.outboundGuard = options.outboundGuard ?? createOutboundGuard();
  }

  /** A new project's web push: a VAPID key pair of its own. Runs in the project's creation transaction. */
  async createPush(tx: Db, projectId: string): Promise<string> {
    const keys = generateVapidKeys();
    await this.savePush(tx, projectId, keys);
    return keys.publicKey;
  }

  /**
   * Sets (or with null clears) the project's email sending domain, `emailConfig.domain`, kept in its email
   * configuration. A project that has chosen no email provider yet gets a configuration of provider `none`.
   */
  async setEmailDomain(tx: Db, projectId: string, domain: string | null): Promise<void> {
    await repo.mergeChannelSettings(tx, projectId, 'email', { domain }, { provider: 'none', credentials: (await this.keyring.box()).seal('{}') });
    await notifyProjectChange(tx, projectId);
  }

  async list(scope: ProjectScope): Promise<{ data: ChannelConfigView[] }> {
    const rows = await repo.listChannelConfigs(this.db, scope.projectId);
    return { data: await Promise.all(rows.map((row) => this.view(row))) };
  }

  /**
   * Replaces the project's VAPID key pair with one brought from elsewhere (subscriptions made with it keep working).
   * Subscriptions made with the old key stop receiving pushes until their browsers subscribe again.
   */
  async setPush(scope: ProjectScope, keys: VapidKeys): Promise<ChannelConfigView> {
    const problem = vapidPairProblem(keys);
    if (problem) throw validationFailed([{ field: 'credentials.vapidPrivateKey', error: problem }]);
    const row = await this.db.transaction(async (tx) => {
      const saved = await this.savePush(tx, scope.projectId, keys);
      await notifyProjectChange(tx, scope.projectId);
      return saved;
    });
    this.forget(scope.projectId);
    return this.view(row);
  }

  /**
   * Chooses the project's email provider: an SMTP server, or an Amazon SES account (asked first for its sandbox state
   * and quotas, which hold from then on: a refusal is a 422 naming what SES said), its credentials sealed at rest.
   * The project's sending domain (`emailConfig.domain`) stays. The next claimed batch sends through it, in every worker.
   */
  async setEmail(scope: ProjectScope, input: EmailProviderInput): Promise<ChannelConfigView> {
    const settings = input.provider === 'ses' ? await this.sesSettings(input) : await this.smtpSettings(input);
    const box = await this.keyring.box();
    const row = await this.db.transaction(async (tx) => {
      const saved = await repo.replaceProvider(
        tx,
        { projectId: scope.projectId, channel: 'email', provider: input.provider, settings, credentials: box.seal(JSON.stringify(input.credentials ?? {})) },
        ['domain'],
      );
      await notifyProjectChange(tx, scope.projectId);
      return saved;
    });
    this.forget(scope.projectId);
    return this.view(row);
  }

  /**
   * Chooses the project's WhatsApp provider: a phone number of a WhatsApp Business Account on Meta's Cloud API, or a
   * Twilio WhatsApp sender. The provider is asked first — Meta for the phone number with the token, Twilio for the
   * account with its credentials —: a refusal is a 422 naming the field and what the provider said, an unreachable
   * provider a 502. Secrets are sealed at rest and never returned.
   */
  async setWhatsApp(scope: ProjectScope, input: WhatsAppProviderInput): Promise<ChannelConfigView> {
    const settings = input.provider === 'meta' ? await this.metaSettings(input) : await this.twilioSettings(input);
    const box = await this.keyring.box();
    const row = await this.db.transaction(async (tx) => {
      const saved = await repo.replaceProvider(
        tx,
        { projectId: scope.projectId, channel: 'whatsapp', provider: input.provider, settings, credentials: box.seal(JSON.stringify(input.credentials)) },
        [],
      );
      await notifyProjectChange(tx, scope.projectId);
      return saved;
    });
    this.forget(scope.projectId);
    return this.view(row);
  }

  /** A project's configuration of a channel with its credentials opened, or undefined when it has none. */
  async opened(projectId: string, channel: Channel): Promise<{ provider: string; settings: Record<string, unknown>; credentials: Record<string, string> } | undefined> {
    const row = await repo.findChannelConfig(this.db, projectId, channel);
    return row && { provider: row.provider, settings: row.settings, credentials: await this.open(row.credentials) };
  }

  /**
   * Chooses the project's SMS provider (Twilio), replacing the previous one; credentials sealed at rest. Twilio is
   * asked first, as for a Twilio WhatsApp sender (twilioSettings). The next claimed batch and the next callback use
   * it, in every worker.
   */
  async setSms(scope: ProjectScope, input: SmsProviderInput): Promise<ChannelConfigView> {
    const settings = await this.twilioSettings(input);
    const box = await this.keyring.box();
    const row = await this.db.transaction(async (tx) => {
      const saved = await repo.replaceProvider(
        tx,
        { projectId: scope.projectId, channel: 'sms', provider: input.provider, settings, credentials: box.seal(JSON.stringify(input.credentials)) },
        [],
      );
      await notifyProjectChange(tx, scope.projectId);
      return saved;
    });
    this.forget(scope.projectId);
    return this.view(row);
  }

  /** Meta's settings once Meta has read the phone number with the token; how Meta shows the number is kept. */
  private async metaSettings(input: Extract<WhatsAppProviderInput, { provider: 'meta' }>): Promise<Record<string, unknown>> {
    if (!this.options.readPhoneNumber) throw new Error('no Cloud API client configured');
    const { phoneNumberId } = input.settings;
    const read = await this.options.readPhoneNumber({ phoneNumberId, accessToken: input.credentials.accessToken });
    if (!read.ok) {
      if (read.refused === 'token') throw validationFailed([{ field: 'credentials.accessToken', error: `Meta refused the access token: ${read.message}` }]);
      if (read.refused === 'phone_number') {
        throw validationFailed([{ field: 'settings.phoneNumberId', error: `Meta has no phone number ${phoneNumberId} this token may use: ${read.message}` }]);
      }
      throw new AppError(502, 'provider_error', `Meta could not be asked about the phone number: ${read.message}`);
    }
    const shown = { displayPhoneNumber: read.displayPhoneNumber, verifiedName: read.verifiedName };
    return { ...input.settings, ...Object.fromEntries(Object.entries(shown).filter(([, value]) => value !== undefined)) };
  }

  /**
   * A Twilio account's settings (an SMS provider's, a WhatsApp sender's) once Twilio has read the account with the
   * credentials sends log in with and, when those are an API key, with the auth token too: it signs every callback.
   */
  private async twilioSettings<Settings extends { accountSid: string }>(input: { settings: Settings; credentials: TwilioCredentials }): Promise<Settings> {
    if (!this.options.readTwilioAccount) throw new Error('no Twilio client configured');
    const { accountSid } = input.settings;
    const { authToken, apiKeySid } = input.credentials;
    const logins: { field: string; credentials: Record<string, string> }[] = [
      ...(apiKeySid === undefined ? [] : [{ field: 'credentials.apiKeySid', credentials: { ...input.credentials } as Record<string, string> }]),
      { field: 'credentials.authToken', credentials: { authToken } },
    ];
    for (const login of logins) {
      const read = await this.options.readTwilioAccount({ accountSid, credentials: login.credentials });
      if (!read.ok) {
        if (read.refused === 'credentials') throw validationFailed([{ field: login.field, error: `Twilio refused to read account ${accountSid} with these credentials: ${read.message}` }]);
        throw new AppError(502, 'provider_error', `Twilio could not be asked about the account: ${read.message}`);
      }
      if (read.status !== 'active') throw validationFailed([{ field: 'settings.accountSid', error: `the Twilio account is ${read.status}, not active` }]);
    }
    return { ...input.settings };
  }

  /**
   * An SMTP server's settings once its host passed the outbound guard (every address it resolves to now; sends check
   * again as they connect), with how its connections are encrypted. `secure` is kept beside `tls` for older readers.
   */
  private async smtpSettings(input: Extract<EmailProviderInput, { provider: 'smtp' }>): Promise<Record<string, unknown>> {
    const { secure, tls: asked, ...settings } = input.settings;
    if (asked !== undefined && secure !== undefined && (asked === 'implicit') !== secure) {
      throw validationFailed([{ field: 'settings.secure', error: `secure: ${secure} contradicts tls: ${asked} (give tls alone)` }]);
    }
    const refusal = await this.outboundGuard.resolvedRefusal(settings.host);
    if (refusal) throw validationFailed([{ field: 'settings.host', error: refusal }]);
    const tls: SmtpTls = asked ?? (secure === true ? 'implicit' : this.outboundGuard.allows(settings.host) ? 'opportunistic' : 'required');
    return { ...settings, tls, secure: tls === 'implicit' };
  }

  /** An SES account's settings as SES reports them; a lower `ratePerSecond` asked for holds instead of its own. */
  private async sesSettings(input: Extract<EmailProviderInput, { provider: 'ses' }>): Promise<Record<string, unknown>> {
    if (!this.options.readSesAccount) throw new Error('no SES client configured');
    const { region, configurationSet, ratePerSecond } = input.settings;
    let account: SesAccountFacts;
    try {
      account = await this.options.readSesAccount({ region, ...input.credentials });
    } catch (error) {
      const { name, message } = error as Error;
      throw validationFailed([{ field: 'credentials', error: `SES refused to read the account (GetAccount): ${name}: ${message}` }]);
    }
    if (!account.sendingEnabled) throw validationFailed([{ field: 'credentials', error: 'sending is disabled for this SES account' }]);
    return {
      region,
      ...(configurationSet === undefined ? {} : { configurationSet }),
      ratePerSecond: Math.min(ratePerSecond ?? account.ratePerSecond, account.ratePerSecond),
      sandbox: account.sandbox,
      per24Hours: account.per24Hours,
      checkedAt: new Date().toISOString(),
    };
  }

  /** The credentials of a configuration, opened (the delivery engine's providers sign and log in with them). */
  async open(sealed: string): Promise<Record<string, string>> {
    const plain = sealed.startsWith(repo.UNSEALED_PREFIX) ? sealed.slice(repo.UNSEALED_PREFIX.length) : (await this.keyring.box()).open(sealed);
    return JSON.parse(plain) as Record<string, string>;
  }

  /** Seals what a migration copied in the clear; run at every start (nothing to do, once done). Returns how many. */
  async sealUnsealed(): Promise<number> {
    return this.resealWhere(true);
  }

  /** Reseals every credential sealed by HERALD_SECRET_KEY_PREVIOUS under HERALD_SECRET_KEY. Returns how many. */
  async rotate(): Promise<number> {
    return this.resealWhere(false);
  }

  private async resealWhere(onlyUnsealed: boolean): Promise<number> {
    const box = await this.keyring.box();
    let count = 0;
    for (const row of await repo.allCredentials(this.db, onlyUnsealed)) {
      const unsealed = row.credentials.startsWith(repo.UNSEALED_PREFIX);
      if (!unsealed && !box.sealedByOtherKey(row.credentials)) continue;
      const plain = unsealed ? row.credentials.slice(repo.UNSEALED_PREFIX.length) : box.open(row.credentials);
      if (await repo.replaceCredentials(this.db, row.projectId, row.channel, row.credentials, box.seal(plain))) count++;
    }
    return count;
  }

  private async savePush(db: Db, projectId: string, keys: VapidKeys) {
    const box = await this.keyring.box();
    return repo.upsertChannelConfig(db, {
      projectId,
      channel: 'push',
      provider: 'web-push',
      settings: { vapidPublicKey: keys.publicKey },
      credentials: box.seal(JSON.stringify({ vapidPrivateKey: keys.privateKey })),
    });
  }

  /** The stored settings, with the callback URLs to paste into the provider's console. */
  private withCallbackUrls(row: repo.ChannelConfigRow): Record<string, unknown> {
    const publicUrl = this.options.publicUrl;
    if (publicUrl === undefined) return row.settings;
    if (row.provider === 'twilio' && (row.channel === 'sms' || row.channel === 'whatsapp')) return { ...row.settings, ...twilioWebhookUrls(publicUrl, row.channel, row.projectId) };
    if (row.channel === 'whatsapp') return { ...row.settings, webhookUrl: whatsappWebhookUrl(publicUrl, row.projectId) };
    return row.settings;
  }

  private async view(row: repo.ChannelConfigRow): Promise<ChannelConfigView> {
    return {
      channel: row.channel,
      provider: row.provider,
      settings: this.withCallbackUrls(row),
      credentials: Object.keys(await this.open(row.credentials)),
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}
