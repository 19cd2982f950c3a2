// Subscribers: registration of push devices, identify/tag, lookups, listing and live audience analytics.
import type pg from 'pg';
import type { Db } from '../../db/database.js';
import { isUniqueViolation } from '../../db/pg-errors.js';
import { notFound, unauthorized, validationFailed } from '../../shared/errors.js';
import { identityHashMatches, identityVerification } from '../projects/index.js';
import { newId } from '../../shared/ids.js';
import { randomToken } from '../../shared/secrets.js';
import type { ProjectScope, Reach } from '../tenancy.js';
import type { AttributeListService } from '../segments/index.js';
import { ATTRIBUTES_MAX_BYTES } from './attributes.schemas.js';
import type { GeoLookup } from './geo.js';
import { SubscriberInsertBatcher } from './subscriber-insert-batcher.js';
import { decodeCursor, encodeCursor, toTimelineItem } from './person-timeline.js';
import { timelinePage } from './person-timeline.repository.js';
import * as repo from './subscriber.repository.js';
import { canonicalLanguage, languageFromHeader, parseUserAgent } from './user-agent.js';

export interface Subscriber {
  id: string;
  token: string;
  projectId: string;
  externalId: string | null;
  endpoint: string | null;
  userAgent: string | null;
  platform: repo.SubscriberRow['platform'];
  browser: repo.SubscriberRow['browser'];
  os: repo.SubscriberRow['os'];
  device: string | null;
  country: string | null;
  city: string | null;
  language: string | null;
  timezone: string | null;
  email: string | null;
  phone: string | null;
  emailStatus: repo.SubscriberRow['emailStatus'];
  status: repo.SubscriberRow['status'];
  sandbox: boolean;
  tags: string[];
  attributes: Record<string, unknown>;
  preferences: repo.SubscriberRow['preferences'];
  createdAt: string;
  updatedAt: string;
  subscribedAt: string;
  lastSeenAt: string;
  /** In the detail, list and contact answers. */
  marketingConsent?: repo.MarketingConsents;
  /** In the detail and list answers. */
  name?: string | null;
  channels?: repo.PersonChannel[];
}

export type BulkAction =
  | { action: 'tag' | 'untag'; tags: string[] }
  | { action: 'delete' }
  | { action: 'set_attributes'; attributes: Record<string, unknown> };
export type ExportedPerson = Awaited<ReturnType<typeof repo.pageSelection>>[number];
const EXPORT_BATCH = 1000;

/** The push keys (p256dh, auth) are write-only: they never leave the server. */
export function toSubscriber(row: repo.SubscriberRow | repo.PersonRow, marketingConsent?: repo.MarketingConsents): Subscriber {
  return {
    ...(marketingConsent && { marketingConsent }),
    ...('channels' in row && { name: row.name, channels: row.channels }),
    id: row.id,
    token: row.token,
    projectId: row.projectId,
    externalId: row.externalId,
    endpoint: row.endpoint,
    userAgent: row.userAgent,
    platform: row.platform,
    browser: row.browser,
    os: row.os,
    device: row.device,
    country: row.country,
    city: row.city,
    language: row.language,
    timezone: row.timezone,
    email: row.email,
    phone: row.phone,
    emailStatus: row.emailStatus,
    status: row.status,
    sandbox: row.sandbox,
    tags: row.tags,
    attributes: row.attributes,
    preferences: row.preferences,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    subscribedAt: row.subscribedAt.toISOString(),
    lastSeenAt: row.lastSeenAt.toISOString(),
  };
}

/** Subscribers as answered, each with its marketing consent per channel (read in one query, after the rows). */
export async function withConsents(db: Db, reach: Reach, rows: readonly (repo.SubscriberRow | repo.PersonRow)[]): Promise<Subscriber[]> {
  const consents = await repo.findConsents(db, reach, rows.map((row) => row.id));
  return rows.map((row) => toSubscriber(row, consents.get(row.id)));
}

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);

/**
 * An event as the API shows it: of what its reporter stored in `detail`, only what a person reads — whether it looks
 * like a machine, the URL of a click, the code and diagnostic of a bounce — never the agent or the reporter's payload.
 */
function toSubscriberEvent({ detail, occurredAt, ...row }: repo.EventRow) {
  const reported = detail ?? {};
  const bounce = row.type === 'bounced' || row.type === 'soft_bounced';
  // SES names a bounce by its type and subtype where a DSN gives an enhanced status code.
  const sesBounce = [text(reported.bounceType), text(reported.bounceSubType)].filter((part) => part !== null).join('/');
  return {
    ...row,
    occurredAt: occurredAt.toISOString(),
    machine: reported.machine !== undefined,
    // Herald's tracked links store the target as `url`, SES's click events as `link`.
    url: row.type === 'clicked' ? (text(reported.url) ?? text(reported.link)) : null,
    bounceCode: bounce ? (text(reported.status) ?? (sesBounce || null)) : null,
    diagnostic: bounce ? text(reported.diagnosticCode) : null,
  };
}

export interface RegistrationInput {
  endpoint: string;
  p256dh: string;
  auth: string;
  userAgent: string;
  timezone?: string | undefined;
  language?: string | undefined;
}

export interface RequestContext {
  acceptLanguage?: string | undefined;
  /** Client address and request headers, for geo (trusted headers only when configured). */
  ip?: string | undefined;
  headers?: Record<string, string | string[] | undefined> | undefined;
}

const noGeo: GeoLookup = { locate: () => ({ country: null, city: null, timezone: null }) };

/** What a registration answers with: the handle the SDK keeps. */
export type Registration = Pick<Subscriber, 'id' | 'token' | 'projectId' | 'status'>;

/**
 * `created`: a new subscriber; `exists`: the endpoint is taken (spec 3.2: a 409), with the existing subscriber when the
 * caller may see it — revived first when it was `unsubscribed` and its browser registered the endpoint again.
 */
export type RegistrationResult =
  | { outcome: 'created'; subscriber: Registration }
  | { outcome: 'exists'; existing: Subscriber | undefined };

/** `replaced`: the subscriber now holds the new subscription; `exists`: another subscriber holds its endpoint. */
export type PushSubscriptionResult = { outcome: 'replaced'; subscriber: Subscriber } | { outcome: 'exists'; existing: Subscriber | undefined };

const TOKEN_LENGTH = 32; // 160 bits

export class SubscriberService {
  private readonly inserts: SubscriberInsertBatcher;

  constructor(
    private readonly db: Db,
    pool: pg.Pool,
    private readonly attributes: AttributeListService,
    private readonly geo: GeoLookup = noGeo,
    /** What a registration also writes in its transaction: the composition root enrolls `subscriber_added` automations. */
    onRegistered?: repo.OnRegistered,
  ) {
    this.inserts = new SubscriberInsertBatcher(pool, undefined, onRegistered);
  }

  /** Registers a push device; a test key registers a sandbox subscriber. A known endpoint is not overwritten. */
  async register(scope: ProjectScope, input: RegistrationInput, context: RequestContext = {}): Promise<RegistrationResult> {
    const device = parseUserAgent(input.userAgent);
    const language =
      (input.language !== undefined ? canonicalLanguage(input.language) : null) ?? languageFromHeader(context.acceptLanguage);
    const geo = this.geo.locate({ ip: context.ip, headers: context.headers });
    const row: repo.NewRegistration = {
      id: newId('sub'),
      projectId: scope.projectId,
      token: `st_${randomToken(TOKEN_LENGTH)}`,
      endpoint: input.endpoint,
      p256dh: input.p256dh,
      auth: input.auth,
      userAgent: input.userAgent,
      ...device,
      language,
      country: geo.country,
      city: geo.city,
      timezone: input.timezone ?? geo.timezone,
      sandbox: scope.sandbox,
      registeredAt: new Date(),
    };
    const created = { outcome: 'created', subscriber: { id: row.id, token: row.token, projectId: row.projectId, status: 'active' } } as const;
    if (await this.inserts.insert(row)) return created;
    const existing = await repo.findByEndpoint(this.db, scope.projectId, input.endpoint);
    // Our own row: its batch was committed but failed afterwards (connection lost), and the retry met it.
    if (existing?.id === row.id) return created;
    // Permission granted again, or a new subscription after the push service reported the old one gone: the browser
    // holds new keys for the same endpoint. An `inactive` row stays so: an operator or Herald (a refused endpoint)
    // decided it. A concurrent registration may have revived it first: then it is read again.
    let current = existing;
    if (existing?.status === 'unsubscribed' && existing.sandbox === scope.sandbox) {
      current = (await repo.resubscribe(this.db, scope, existing.id, row)) ?? (await repo.findByEndpoint(this.db, scope.projectId, input.endpoint));
    }
    // Shown to a caller who may read it: a live key sees both environments, a test key only the sandbox.
    const visible = current && (current.sandbox || !scope.sandbox) ? toSubscriber(current) : undefined;
    return { outcome: 'exists', existing: visible };
  }

  /** A known subscriber's new push subscription: its browser's keys changed, or it subscribed again after unsubscribing. */
  async replacePushSubscription(
    reach: Reach,
    token: string,
    input: Pick<RegistrationInput, 'endpoint' | 'p256dh' | 'auth' | 'userAgent'>,
  ): Promise<PushSubscriptionResult> {
    const current = await repo.findByToken(this.db, reach, token);
    if (!current) throw notFound('Subscriber');
    try {
      const row = await repo.replacePushSubscription(this.db, reach, token, { ...input, ...parseUserAgent(input.userAgent) });
      if (!row) throw notFound('Subscriber');
      return { outcome: 'replaced', subscriber: toSubscriber(row) };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const holder = await repo.findByEndpoint(this.db, current.projectId, input.endpoint);
      const sandboxCaller = 'sandbox' in reach && reach.sandbox;
      const visible = holder && (holder.sandbox || !sandboxCaller) ? toSubscriber(holder) : undefined;
      return { outcome: 'exists', existing: visible };
    }
  }

  async unsubscribe(reach: Reach, token: string) {
    const row = await repo.unsubscribeByToken(this.db, reach, token);
    if (!row) throw notFound('Subscriber');
    return { id: row.id, status: row.status, updatedAt: row.updatedAt.toISOString() };
  }

  async get(reach: Reach, id: string): Promise<Subscriber> {
    const row = await repo.findPerson(this.db, reach, id);
    if (!row) throw notFound('Subscriber');
    return (await withConsents(this.db, reach, [row]))[0]!;
  }

  /** What was sent to one subscriber, newest first: campaigns and transactional sends, with their outcome. */
  async deliveries(reach: Reach, id: string, page: number, pageSize: number) {
    const subscriber = await repo.findById(this.db, reach, id);
    if (!subscriber) throw notFound('Subscriber');
    const { rows, total } = await repo.deliveryHistory(this.db, subscriber, pageSize, (page - 1) * pageSize);
    const iso = (at: Date | null) => at?.toISOString() ?? null;
    const data = rows.map((row) => ({
      ...row,
      createdAt: row.createdAt.toISOString(),
      sentAt: iso(row.sentAt),
      deliveredAt: iso(row.deliveredAt),
      clickedAt: iso(row.clickedAt),
      dismissedAt: iso(row.dismissedAt),
      failedAt: iso(row.failedAt),
    }));
    return { data, page, pageSize, total };
  }

  /** What happened to what was sent to one subscriber, newest first: every logged event, repeats and likely machines flagged. */
  async events(reach: Reach, id: string, filters: repo.EventFilters, page: number, pageSize: number) {
    const subscriber = await repo.findById(this.db, reach, id);
    if (!subscriber) throw notFound('Subscriber');
    const { rows, total } = await repo.eventHistory(this.db, subscriber, filters, pageSize, (page - 1) * pageSize);
    return { data: rows.map(toSubscriberEvent), page, pageSize, total };
  }

  /** A page of everything that happened to or with one subscriber, newest first, and the cursor of the next. */
  async timeline(reach: Reach, id: string, cursor: string | undefined, limit: number) {
    const after = cursor === undefined ? undefined : decodeCursor(cursor);
    const subscriber = await repo.findById(this.db, reach, id);
    if (!subscriber) throw notFound('Subscriber');
    const rows = await timelinePage(this.db, subscriber, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return { data: page.map(toTimelineItem), nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
  }

  async getByToken(reach: Reach, token: string): Promise<Subscriber> {
    const row = await repo.findByToken(this.db, reach, token);
    if (!row) throw notFound('Subscriber');
    return toSubscriber(row);
  }

  /** The devices of one of the caller's users (at most 100). */
  async byExternalId(scope: ProjectScope, externalId: string) {
    return { data: (await repo.findByExternalId(this.db, scope, externalId, 100)).map((row) => toSubscriber(row)) };
  }

  async remove(reach: Reach, id: string): Promise<void> {
    if (!(await repo.deleteById(this.db, reach, id))) throw notFound('Subscriber');
  }

  /**
   * A publishable key's claim is checked first when the project verifies identities, so a refused claim changes
   * nothing and does not tell whether the token exists.
   */
  async identify(reach: Reach, token: string, externalId: string, caller: { publishable: boolean; externalIdHash?: string | undefined }) {
    if (caller.publishable && 'projectId' in reach) {
      const verification = await identityVerification(this.db, reach.organizationId, reach.projectId);
      if (verification?.required) {
        if (caller.externalIdHash === undefined) {
          throw validationFailed([{ field: 'externalIdHash', error: 'required: this project verifies identities (settings.identityVerification)' }]);
        }
        if (!identityHashMatches(verification.secret, externalId, caller.externalIdHash)) {
          throw unauthorized('externalIdHash is not the HMAC of this externalId under the project identity secret', 'invalid_identity_hash');
        }
      }
    }
    const row = await repo.updateByToken(this.db, reach, token, { externalId });
    if (!row) throw notFound('Subscriber');
    return { id: row.id, token: row.token, externalId: row.externalId, updatedAt: row.updatedAt.toISOString() };
  }

  async tag(reach: Reach, token: string, tags: string[]) {
    const row = await repo.updateByToken(this.db, reach, token, { tags: repo.appendTags(tags) });
    if (!row) throw notFound('Subscriber');
    return { id: row.id, tags: row.tags };
  }

  async untag(reach: Reach, token: string, tags: string[]) {
    const row = await repo.updateByToken(this.db, reach, token, { tags: repo.removeTags(tags) });
    if (!row) throw notFound('Subscriber');
    return { id: row.id, tags: row.tags };
  }

  async seen(reach: Reach, token: string) {
    const row = await repo.touchByToken(this.db, reach, token);
    if (!row) throw notFound('Subscriber');
    return { id: row.id, lastSeenAt: row.lastSeenAt.toISOString() };
  }

  async list(scope: ProjectScope, filters: repo.ListFilters, order: repo.ListOrder, page: number, pageSize: number) {
    const { rows, total } = await repo.listSubscribers(this.db, scope, filters, order, pageSize, (page - 1) * pageSize);
    return { data: await withConsents(this.db, scope, rows), page, pageSize, total };
  }

  /** A bulk action on a selection of the people list, in one transaction: how many rows it selected and changed. */
  async bulk(scope: ProjectScope, selection: repo.Selection, action: BulkAction): Promise<{ matched: number; changed: number }> {
    if (action.action === 'delete') return repo.deleteSelection(this.db, scope, selection);
    if (action.action === 'set_attributes') return this.setAttributes(scope, selection, action.attributes);
    return repo.tagSelection(this.db, scope, selection, action.action, action.tags);
  }

  /** As a single attributes write, for every selected person: all or none, the names then listed with their types. */
  private async setAttributes(scope: ProjectScope, selection: repo.Selection, attributes: Record<string, unknown>) {
    const entries = Object.entries(attributes);
    const set = Object.fromEntries(entries.filter(([, v]) => v !== null));
    const remove = entries.filter(([, v]) => v === null).map(([k]) => k);
    const { matched, changed } = await this.db.transaction(async (tx) => {
      const result = await repo.setAttributesOfSelection(tx, scope, selection, set, remove);
      if (result.largest > ATTRIBUTES_MAX_BYTES) {
        throw validationFailed([{ field: 'attributes', error: `the merged attributes would exceed ${ATTRIBUTES_MAX_BYTES} bytes of JSON` }]);
      }
      return result;
    });
    // After the commit, as single writes do, so the list is never ahead of the people.
    if (changed > 0) await this.attributes.recordWritten(scope, [attributes]);
    return { matched, changed };
  }

  /** The selected rows with the list's columns, read by keyset pages (by id) of 1,000 as the CSV stream asks for them. */
  async *exportSelection(scope: ProjectScope, selection: repo.Selection): AsyncGenerator<ExportedPerson> {
    let after: string | undefined;
    for (;;) {
      const rows = await repo.pageSelection(this.db, scope, selection, after, EXPORT_BATCH);
      yield* rows;
      if (rows.length < EXPORT_BATCH) return;
      after = rows.at(-1)!.id;
    }
  }

  /** Active subscribers per country, platform, browser, os, device and city, largest first; every value, or the top `limit`. */
  async analytics(scope: ProjectScope, limit?: number) {
    const result = Object.fromEntries(repo.ANALYTICS_DIMENSIONS.map((d) => [d, [] as { key: string; count: number }[]])) as Record<
      repo.AnalyticsDimension,
      { key: string; count: number }[]
    >;
    for (const row of await repo.countByDimensions(this.db, scope, limit)) {
      result[row.dimension].push({ key: row.key, count: Number(row.count) });
    }
    return result;
  }
}
