// Contacts: the email, phone, timezone, language, attributes and preferences of subscribers, set by token (SDK)
// or by id (server, dashboard); email- or phone-only contacts; all-or-nothing bulk import.
import type { Db } from '../../db/database.js';
import type { ConsentChange, DeliveryRecords } from '../../delivery/index.js';
import { AppError, notFound, validationFailed } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { randomToken } from '../../shared/secrets.js';
import type { ProjectScope, Reach } from '../tenancy.js';
import { upsertKeyOf, validateRows } from './contact-import.js';
import * as repo from './contact.repository.js';
import { type AttributeListService, CONSENT_CHANNELS, type ConsentChannel } from '../segments/index.js';
import { ATTRIBUTES_MAX_BYTES, jsonBytes } from './attributes.schemas.js';
import { type ContactInput, type ContactUpdate, type CsvTypes, type MarketingConsentInput, type UpsertKey } from './contact.schemas.js';
import type { SubscriberRow } from './subscriber.repository.js';
import { withConsents, type Subscriber } from './subscriber.service.js';

const TOKEN_LENGTH = 32; // as at registration
const PHONE_CHANNELS = ['sms', 'whatsapp'] as const;
const newToken = () => `st_${randomToken(TOKEN_LENGTH)}`;

function toPatch(update: ContactUpdate): repo.ContactPatch {
  const patch: repo.ContactPatch = {
    email: update.email,
    phone: update.phone,
    timezone: update.timezone,
    language: update.language,
  };
  if (update.attributes) {
    const entries = Object.entries(update.attributes);
    patch.attributesSet = Object.fromEntries(entries.filter(([, v]) => v !== null));
    patch.attributesRemove = entries.filter(([, v]) => v === null).map(([k]) => k);
  }
  if (update.preferences?.channels) patch.channels = update.preferences.channels as Record<string, boolean>;
  return patch;
}

const addressOf = (row: SubscriberRow, channel: ConsentChannel) => (channel === 'email' ? (row.email?.toLowerCase() ?? null) : row.phone);

/** The consents a request states of a subscriber's addresses (each channel given must have its address). */
function consentChanges(row: SubscriberRow, consent: MarketingConsentInput | undefined, source: string): ConsentChange[] {
  return CONSENT_CHANNELS.flatMap((channel) => {
    const state = consent?.[channel];
    const address = addressOf(row, channel);
    return state === undefined || address === null ? [] : [{ projectId: row.projectId, sandbox: row.sandbox, channel, address, consent: state, source }];
  });
}

const dedupe = (tags: string[] | undefined) => (tags ? [...new Set(tags)] : undefined);

export interface ImportResult {
  created: number;
  updated: number;
  total: number;
}

export class ContactService {
  constructor(
    private readonly db: Db,
    private readonly records: DeliveryRecords,
    private readonly attributes: AttributeListService,
  ) {}

  updateById(reach: Reach, id: string, update: ContactUpdate): Promise<Subscriber> {
    return this.update(reach, { id }, update, 'api');
  }

  /** The SDK's update (by the subscriber's token): a consent it gives is the person's own. */
  updateByToken(reach: Reach, token: string, update: ContactUpdate): Promise<Subscriber> {
    return this.update(reach, { token }, update, 'sdk');
  }

  /** One statement; rolled back when the merged attributes outgrow the cap or a consent names no address. */
  private async update(reach: Reach, target: { id: string } | { token: string }, update: ContactUpdate, source: string) {
    const updated = await this.db.transaction(async (tx) => {
      const row = await repo.updateContact(tx, reach, target, toPatch(update));
      if (!row) throw notFound('Subscriber');
      if (jsonBytes(row.attributes) > ATTRIBUTES_MAX_BYTES) {
        throw validationFailed([
          { field: 'attributes', error: `the merged attributes would exceed ${ATTRIBUTES_MAX_BYTES} bytes of JSON` },
        ]);
      }
      const missing = CONSENT_CHANNELS.filter((channel) => update.marketingConsent?.[channel] !== undefined && addressOf(row, channel) === null);
      if (missing.length > 0) {
        throw validationFailed(
          missing.map((channel) => ({ field: `marketingConsent.${channel}`, error: `the subscriber has no ${channel === 'email' ? 'email address' : 'phone number'}` })),
        );
      }
      await this.records.recordConsents(tx, consentChanges(row, update.marketingConsent, source));
      return (await withConsents(tx, reach, [row]))[0]!;
    });
    await this.attributes.recordWritten({ projectId: updated.projectId, sandbox: updated.sandbox }, [update.attributes]);
    return updated;
  }

  /** An email- or phone-only contact (no push endpoint), active; a test key creates a sandbox contact. */
  async create(scope: ProjectScope, input: ContactInput): Promise<Subscriber> {
    const now = new Date();
    const created = await this.db.transaction(async (tx) => {
      const row = await repo.insertContact(tx, {
        id: newId('sub'),
        projectId: scope.projectId,
        token: newToken(),
        externalId: input.externalId ?? null,
        email: input.email ?? null,
        phone: input.phone ?? null,
        timezone: input.timezone ?? null,
        language: input.language ?? null,
        tags: dedupe(input.tags) ?? [],
        attributes: Object.fromEntries(Object.entries(input.attributes ?? {}).filter(([, v]) => v !== null)),
        preferences: input.preferences?.channels ? { channels: input.preferences.channels } : {},
        status: 'active',
        sandbox: scope.sandbox,
        createdAt: now,
        subscribedAt: now,
        updatedAt: now,
        lastSeenAt: now,
      });
      await this.records.recordConsents(tx, consentChanges(row, input.marketingConsent, 'api'));
      return (await withConsents(tx, scope, [row]))[0]!;
    });
    await this.attributes.recordWritten(scope, [input.attributes]);
    return created;
  }

  /**
   * Who an email to each `address` (lower-cased) goes through in its scope's environment: the subscribers carrying
   * it, or — for an address the project does not know — a new active contact with only that address (a transactional
   * email names its recipient by address, and every delivery belongs to a subscriber). Part of the caller's
   * transaction `tx`: each address stays locked until it ends. Answers in the order given.
   */
  async emailRecipients(tx: Db, wanted: readonly { scope: ProjectScope; address: string }[]): Promise<repo.EmailHolders[]> {
    const at = new Date();
    const holders = await repo.findOrInsertEmailHolders(
      tx,
      wanted.map(({ scope, address }) => ({ scope, address, contact: { id: newId('sub'), token: newToken(), at } })),
    );
    // A receipt is not consent to marketing: the address of a contact made for a transactional send is `transactional`.
    await this.records.recordConsents(
      tx,
      wanted
        .filter((_, i) => holders[i]!.created)
        .map(({ scope, address }) => ({ ...scope, channel: 'email' as const, address, consent: 'transactional' as const, source: 'transactional' })),
      { unlessSaid: true },
    );
    return holders;
  }

  /**
   * The subscribers carrying an E.164 number in the scope's environment, for a send on `channel`: a number the project
   * does not know becomes a contact with only that number, as every delivery belongs to a subscriber.
   */
  phoneRecipient(scope: ProjectScope, phone: string, channel: 'sms' | 'whatsapp'): Promise<repo.PhoneHolders> {
    const now = new Date();
    return repo.findOrInsertPhoneHolder(this.db, scope, phone, channel, {
      id: newId('sub'),
      projectId: scope.projectId,
      token: newToken(),
      phone,
      status: 'active',
      sandbox: scope.sandbox,
      createdAt: now,
      subscribedAt: now,
      updatedAt: now,
      lastSeenAt: now,
    }, (tx) =>
      // A receipt is not consent to marketing, on either channel the number reaches.
      this.records.recordConsents(
        tx,
        PHONE_CHANNELS.map((on) => ({ ...scope, channel: on, address: phone, consent: 'transactional' as const, source: 'transactional' })),
        { unlessSaid: true },
      ),
    );
  }

  /**
   * Validates every row, then applies all of them in one transaction (or none): rows whose key matches existing
   * subscribers of the project and environment update them, the others are created. `types` (a CSV import's
   * attribute types) are then declared in the project's attribute list.
   */
  async import(scope: ProjectScope, by: UpsertKey, raw: unknown[], types: CsvTypes = {}): Promise<ImportResult> {
    const rows = validateRows(raw, by);
    const input: repo.ImportRow[] = rows.map((row, idx) => ({
      idx,
      key: upsertKeyOf(row, by)!,
      id: newId('sub'),
      token: newToken(),
      external_id: row.externalId ?? null,
      email: row.email ?? null,
      phone: row.phone ?? null,
      timezone: row.timezone ?? null,
      language: row.language ?? null,
      tags: dedupe(row.tags) ?? null,
      attributes: row.attributes ?? null,
      channels: (row.preferences?.channels as Record<string, boolean> | undefined) ?? null,
    }));
    const imported = await this.db.transaction(async (tx) => {
      const result = await repo.upsertContacts(tx, scope, by, input, ATTRIBUTES_MAX_BYTES);
      if (result.oversized.length > 0) {
        throw new AppError(
          422,
          'validation_failed',
          'Validation failed',
          result.oversized.slice(0, 500).map((idx) => ({
            field: `rows[${idx}].attributes`,
            error: `the merged attributes would exceed ${ATTRIBUTES_MAX_BYTES} bytes of JSON`,
          })),
        );
      }
      await this.records.recordConsents(
        tx,
        rows.flatMap((row) =>
          CONSENT_CHANNELS.flatMap((channel) => {
            const consent = row.marketingConsent?.[channel];
            const address = channel === 'email' ? row.email?.toLowerCase() : row.phone;
            return consent === undefined || address === undefined ? [] : [{ ...scope, channel, address, consent, source: 'import' }];
          }),
        ),
      );
      return { created: result.created, updated: result.updated, total: rows.length };
    });
    // After the commit, so a rolled-back write lists nothing (the attribute list is never ahead of the people).
    for (const [name, type] of Object.entries(types)) await this.attributes.declare(scope, name, type);
    await this.attributes.recordWritten(scope, rows.map((row) => row.attributes));
    return imported;
  }
}
