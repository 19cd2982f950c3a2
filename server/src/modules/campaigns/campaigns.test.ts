// Push campaigns through HTTP on a real database: every transition and 409 of spec 3.1, validation, schedules across
// zones and DST (injected clock), re-send, UTM, lists, CSV export and tenant isolation. Deliveries are moved by the
// engine's own pipeline (deliverNow on claimed rows), so no worker loop runs here.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createTenant, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { seedSubscribers } from '../../../test/subscriber-seed.js';
import { migrationsFolder } from '../../db/database.js';
import * as deliveryRepo from '../../delivery/delivery.repository.js';
import { dispatchJobKey } from './campaign.service.js';

let t: TestApp;
let tenant: Tenant;
let other: Tenant;
let fixedNow: Date | undefined;

beforeAll(async () => {
  t = await startTestApp({ CAMPAIGN_SCHEDULE_GRACE: '1h' }, { clock: () => fixedNow ?? new Date() });
  [tenant, other] = await Promise.all([createTenant(t), createTenant(t)]);
});
afterAll(() => t.close());

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });

const query = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];

interface CampaignBody {
  id: string;
  name: string;
  status: string;
  sandbox: boolean;
  schedule: { mode: string; sendAt: string | null; timezone: string | null };
  stats: Record<string, number>;
  failureReason: string | null;
  resentFrom: string | null;
  segment: Record<string, unknown>;
  content: Record<string, unknown>;
  sentAt: string | null;
  completedAt: string | null;
  createdAt: string;
}

const content = { title: 'Spring sale', body: '20% off everything' };

function body(who: Tenant, overrides: Record<string, unknown> = {}) {
  return { name: 'Campaign', projectId: who.projectId, content, segment: { filters: {} }, schedule: { mode: 'draft' }, ...overrides };
}

async function create(who: Tenant, overrides: Record<string, unknown> = {}, headers: Headers = who.jwt): Promise<CampaignBody> {
  const res = await request('POST', '/campaigns', headers, body(who, overrides));
  expect(res.statusCode, res.body).toBe(201);
  return res.json<CampaignBody>();
}

async function read(who: Tenant, id: string, headers: Headers = who.jwt): Promise<CampaignBody> {
  const res = await request('GET', `/campaigns/${id}`, headers);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<CampaignBody>();
}

const messageOf = async (campaignId: string) =>
  (await query<{ id: string; content: Record<string, unknown>; sandbox: boolean }>('SELECT id, content, sandbox FROM messages WHERE campaign_id = $1', [campaignId]))[0];

/** Runs the dispatch job's work for a campaign, as a worker would. */
const dispatch = (who: Tenant, id: string) => t.services.campaigns.dispatch(who.projectId, id);

/** Sends claimed deliveries through the engine's pipeline (sandbox or live providers), message by message. */
async function send(claimed: deliveryRepo.ClaimedDelivery[]) {
  for (const message of await deliveryRepo.findMessages(t.database.db, [...new Set(claimed.map((d) => d.messageId))])) {
    const project = (await t.services.delivery.sendingProjects([message.projectId])).get(message.projectId);
    await t.services.delivery.deliverNow(claimed.filter((d) => d.messageId === message.id), message, project!);
  }
}

/** Sends every queued delivery, as workers would. */
async function drain() {
  for (;;) {
    const claimed = await deliveryRepo.claimDue(t.database.db, 'push', 1000, 60);
    if (claimed.length === 0) return;
    await send(claimed);
  }
}

/** A project with `n` sandbox subscribers (plus live ones a test key must never reach), for full sandbox flows. */
async function audience(who: Tenant, n: number, extra: Parameters<typeof seedSubscribers>[2][number] = {}) {
  return seedSubscribers(t.database.pool, who.projectId, Array.from({ length: n }, () => ({ sandbox: true, ...extra })));
}

/** A campaign that went all the way to `sent` with a test key. */
async function sentCampaign(who: Tenant, overrides: Record<string, unknown> = {}) {
  const tag = `t${Math.random().toString(36).slice(2, 8)}`;
  await audience(who, 3, { tags: [tag] });
  const campaign = await create(who, { schedule: { mode: 'immediate' }, segment: { filters: { tags: [tag] } }, ...overrides }, who.test);
  await dispatch(who, campaign.id);
  await drain();
  const done = await read(who, campaign.id);
  expect(done.status).toBe('sent');
  return done;
}

/** A scheduled campaign whose time passed beyond the grace window while nothing ran: failed, schedule_missed. */
async function missedCampaign(who: Tenant) {
  fixedNow = new Date('2026-06-01T08:00:00Z');
  try {
    const created = await create(who, { schedule: { mode: 'scheduled', sendAt: '2026-06-01T09:00:00Z' } });
    fixedNow = new Date('2026-06-01T12:00:00Z');
    await dispatch(who, created.id);
  } finally {
    fixedNow = undefined;
  }
  const [row] = await query<{ id: string; status: string }>(
    `SELECT id, status FROM campaigns WHERE project_id = $1 ORDER BY created_at DESC LIMIT 1`,
    [who.projectId],
  );
  expect(row!.status).toBe('failed');
  return row!;
}

describe('POST /campaigns', () => {
  it('immediate: answers sending with stats.queued = the audience, snapshots it and ends sent (test key: sandbox)', async () => {
    const tag = 'immediate-flow';
    await audience(tenant, 5, { tags: [tag] });
    await seedSubscribers(t.database.pool, tenant.projectId, [
      { sandbox: false, tags: [tag] }, // live: another environment
      { sandbox: true, tags: [tag], status: 'unsubscribed' },
      { sandbox: true, tags: [tag], endpoint: null }, // a contact without push
      { sandbox: true, tags: [tag], push: false }, // turned push off
      { sandbox: true, tags: ['other'] },
    ]);
    const res = await request('POST', '/campaigns', tenant.test, body(tenant, { schedule: { mode: 'immediate' }, segment: { filters: { tags: [tag] } } }));
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json<CampaignBody>();
    expect(created).toMatchObject({ name: 'Campaign', status: 'sending', sandbox: true, stats: { queued: 5, sent: 0, clicked: 0, failed: 0 } });
    expect(created.id).toMatch(/^cmp_/);
    expect(Date.parse(created.sentAt!)).not.toBeNaN();
    const [job] = await query<{ task_identifier: string }>('SELECT task_identifier FROM graphile_worker.jobs WHERE key = $1', [dispatchJobKey(created.id)]);
    expect(job?.task_identifier).toBe('campaign-dispatch');

    await dispatch(tenant, created.id);
    const message = await messageOf(created.id);
    expect(message).toMatchObject({ sandbox: true, content: { title: 'Spring sale', body: '20% off everything' } });
    const rows = await query<{ n: number }>(`SELECT count(*)::int AS n FROM deliveries WHERE message_id = $1 AND status = 'queued'`, [message!.id]);
    expect(rows[0]!.n).toBe(5);
    expect((await read(tenant, created.id)).status).toBe('sending');

    await drain();
    const done = await read(tenant, created.id);
    expect(done).toMatchObject({ status: 'sent', stats: { queued: 5, sent: 5, delivered: 0, failed: 0, suppressed: 0, ctr: 0, deliveryRate: 0 } });
    expect(Date.parse(done.completedAt!)).not.toBeNaN();
  });

  it('dispatching twice (a job run again) snapshots the audience once', async () => {
    await audience(tenant, 4, { tags: ['twice'] });
    const created = await create(tenant, { schedule: { mode: 'immediate' }, segment: { filters: { tags: ['twice'] } } }, tenant.test);
    await Promise.all([dispatch(tenant, created.id), dispatch(tenant, created.id), dispatch(tenant, created.id)]);
    await dispatch(tenant, created.id);
    expect(await query('SELECT id FROM messages WHERE campaign_id = $1', [created.id])).toHaveLength(1);
    const message = await messageOf(created.id);
    expect(await query('SELECT id FROM deliveries WHERE message_id = $1', [message!.id])).toHaveLength(4);
    expect((await read(tenant, created.id)).stats.queued).toBe(4);
  });

  it('an empty audience is sent at once', async () => {
    const created = await create(tenant, { schedule: { mode: 'immediate' }, segment: { filters: { tags: ['nobody-has-this'] } } });
    expect(created.stats.queued).toBe(0);
    await dispatch(tenant, created.id);
    expect(await read(tenant, created.id)).toMatchObject({ status: 'sent', stats: { queued: 0, sent: 0 } });
  });

  it('corrects queued to the snapshot size when the audience changed before it landed', async () => {
    await audience(tenant, 2, { tags: ['grows'] });
    const created = await create(tenant, { schedule: { mode: 'immediate' }, segment: { filters: { tags: ['grows'] } } }, tenant.test);
    expect(created.stats.queued).toBe(2);
    await audience(tenant, 3, { tags: ['grows'] });
    await dispatch(tenant, created.id);
    expect((await read(tenant, created.id)).stats.queued).toBe(5);
  });

  it('scheduled: stored as scheduled with a dispatch job at sendAt; draft: stored, no job', async () => {
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await create(tenant, { schedule: { mode: 'scheduled', sendAt } });
    expect(scheduled).toMatchObject({ status: 'scheduled', schedule: { mode: 'scheduled', timezone: 'UTC' }, stats: { queued: 0 } });
    expect(Date.parse(scheduled.schedule.sendAt!)).toBe(Date.parse(sendAt));
    const [job] = await query<{ run_at: Date }>('SELECT run_at FROM graphile_worker.jobs WHERE key = $1', [dispatchJobKey(scheduled.id)]);
    expect(job!.run_at.toISOString()).toBe(sendAt);

    const draft = await create(tenant, { schedule: { mode: 'draft' } });
    expect(draft.status).toBe('draft');
    expect(await query('SELECT 1 FROM graphile_worker.jobs WHERE key = $1', [dispatchJobKey(draft.id)])).toEqual([]);
    await dispatch(tenant, draft.id); // a stray job would not send a draft
    expect((await read(tenant, draft.id)).status).toBe('draft');
    expect(await messageOf(draft.id)).toBeUndefined();
  });

  it('sends to a saved segment of the same project, read at send time', async () => {
    await audience(tenant, 2, { country: 'PT' });
    const segment = await request('POST', '/segments', tenant.test, { projectId: tenant.projectId, name: 'PT', filters: { country: 'PT' } });
    const segmentId = segment.json<{ id: string }>().id;
    const created = await create(tenant, { schedule: { mode: 'immediate' }, segment: { savedSegmentId: segmentId } }, tenant.test);
    expect(created).toMatchObject({ segment: { savedSegmentId: segmentId }, stats: { queued: 2 } });
    await dispatch(tenant, created.id);
    expect((await read(tenant, created.id)).stats.queued).toBe(2);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a missing name', { name: undefined }, 'name'],
    ['a missing title', { content: { body: 'x' } }, 'content.title'],
    ['a javascript: click URL', { content: { ...content, clickUrl: 'javascript:alert(1)' } }, 'content.clickUrl'],
    ['a relative icon URL', { content: { ...content, iconUrl: '/icon.png' } }, 'content.iconUrl'],
    ['an image URL with a space', { content: { ...content, imageUrl: 'https://cdn.example.com/a b.png' } }, 'content.imageUrl'],
    ['an action URL of ftp', { content: { ...content, actions: [{ action: 'ftp://x.example.com', title: 'A' }] } }, 'content.actions.0.action'],
    ['an action that is not a URL', { content: { ...content, actions: [{ action: 'buy', title: 'Buy' }] } }, 'content.actions.0.action'],
    ['the former url field of an action', { content: { ...content, actions: [{ action: 'https://x.example', title: 'A', url: 'https://x.example' }] } }, 'content.actions.0.url'],
    ['an action URL over 2048 characters', { content: { ...content, actions: [{ action: `https://x.example/${'p'.repeat(2040)}`, title: 'A' }] } }, 'content.actions.0.action'],
    ['three actions', { content: { ...content, actions: [1, 2, 3].map((i) => ({ action: `https://x.example/${i}`, title: `A${i}` })) } }, 'content.actions'],
    ['an unknown content field', { content: { ...content, colour: 'red' } }, 'content.colour'],
    ['an unknown filter', { segment: { filters: { planet: 'Mars' } } }, 'segment'],
    ['a segment naming both', { segment: { filters: {}, savedSegmentId: 'seg_x' } }, 'segment'],
    ['an unknown mode', { schedule: { mode: 'later' } }, 'schedule.mode'],
    ['scheduled without sendAt', { schedule: { mode: 'scheduled' } }, 'schedule.sendAt'],
    ['scheduled in the past', { schedule: { mode: 'scheduled', sendAt: '2020-01-01T00:00:00Z' } }, 'schedule.sendAt'],
    ['a malformed sendAt', { schedule: { mode: 'scheduled', sendAt: 'tomorrow' } }, 'schedule.sendAt'],
    ['an unknown time zone', { schedule: { mode: 'scheduled', sendAt: '2099-01-01T09:00', timezone: 'Mars/Base' } }, 'schedule.timezone'],
    ['an empty utm', { utm: {} }, 'utm'],
    ['a saved segment that does not exist', { segment: { savedSegmentId: 'seg_missing' } }, 'segment.savedSegmentId'],
    ['a push over 4 KB', { content: { title: 'x', body: 'é'.repeat(1999) + 'x'.repeat(1) } }, 'content'],
  ])('rejects %s with 422 naming %s', async (_what, overrides, field) => {
    const res = await request('POST', '/campaigns', tenant.jwt, body(tenant, overrides));
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().details.map((d: { field: string }) => d.field).join(' ')).toContain(field);
  });

  it("refuses another project's saved segment (422, existence not disclosed)", async () => {
    const foreign = await request('POST', '/segments', other.jwt, { projectId: other.projectId, name: 'Theirs', filters: {} });
    const res = await request('POST', '/campaigns', tenant.jwt, body(tenant, { segment: { savedSegmentId: foreign.json<{ id: string }>().id } }));
    expect(res.statusCode).toBe(422);
    expect(res.json().details).toEqual([{ field: 'segment.savedSegmentId', error: 'is not a saved segment of this project and environment' }]);
  });

  it('answers 422, not 500, when the saved segment is deleted between validation and the write', async () => {
    const segment = await request('POST', '/segments', tenant.jwt, { projectId: tenant.projectId, name: 'Going', filters: {} });
    const segmentId = segment.json<{ id: string }>().id;
    // An uncommitted delete: the campaign still finds the segment, then its foreign-key check waits for this commit.
    const deleter = await t.database.pool.connect();
    try {
      await deleter.query('BEGIN');
      await deleter.query('DELETE FROM segments WHERE id = $1', [segmentId]);
      const creating = request('POST', '/campaigns', tenant.jwt, body(tenant, { segment: { savedSegmentId: segmentId } }));
      for (let waited = 0; waited < 5_000; waited += 20) {
        const [blocked] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`);
        if (blocked!.n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await deleter.query('COMMIT');
      const res = await creating;
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().details).toEqual([{ field: 'segment.savedSegmentId', error: 'is not a saved segment of this project and environment' }]);
    } finally {
      deleter.release();
    }
  });

  it('documents required and optional fields, the statuses and both rates in OpenAPI', async () => {
    const doc = (await request('GET', '/docs/json', {})).json<{ paths: Record<string, Record<string, { description?: string; security?: unknown }>>; components: { schemas: Record<string, { required?: string[]; properties: Record<string, { description?: string }> }> } }>();
    const input = doc.components.schemas.NewCampaign!;
    expect(input.required).toEqual(expect.arrayContaining(['name', 'projectId', 'content', 'segment', 'schedule']));
    expect(input.required).not.toContain('utm');
    const stats = doc.components.schemas.CampaignStats!;
    expect(stats.properties.ctr!.description).toMatch(/clicked \/ sent/);
    expect(stats.properties.deliveryRate!.description).toMatch(/delivered \/ sent/);
    const send = doc.paths['/campaigns/{id}/send']!.post! as { description: string; responses: Record<string, unknown> };
    expect(Object.keys(send.responses)).toEqual(expect.arrayContaining(['200', '201', '409', '422']));
    expect(send.description).toMatch(/A draft\*\* is dispatched itself/);
    expect(doc.paths['/campaigns/{id}']!.patch!.description).toMatch(/stays a draft/);
    expect(doc.paths['/campaigns/{id}/stream']!.get!.security).toEqual([{ tokenQuery: [], orgIdQuery: [] }, { bearerAuth: [], orgId: [] }]);
    expect(doc.paths['/campaigns/export/project/{projectId}.csv']!.get!.description).toMatch(/Columns, in order: id, name, status/);
  });
});

describe('the schedule: sendAt in its time zone, DST, the injected clock', () => {
  const at = async (sendAt: string, timezone: string | undefined, now: string, who = tenant) => {
    fixedNow = new Date(now);
    try {
      const created = await create(who, { schedule: { mode: 'scheduled', sendAt, ...(timezone && { timezone }) } });
      const [job] = await query<{ run_at: Date }>('SELECT run_at FROM graphile_worker.jobs WHERE key = $1', [dispatchJobKey(created.id)]);
      return { sendAt: created.schedule.sendAt, runAt: job!.run_at.toISOString(), timezone: created.schedule.timezone };
    } finally {
      fixedNow = undefined;
    }
  };

  it('reads a wall-clock time in the campaign zone', async () => {
    expect(await at('2026-06-01T09:00', 'Asia/Kolkata', '2026-05-01T00:00:00Z')).toEqual({
      sendAt: '2026-06-01T09:00:00.000+05:30',
      runAt: '2026-06-01T03:30:00.000Z',
      timezone: 'Asia/Kolkata',
    });
    expect((await at('2026-06-01T09:00', 'America/New_York', '2026-05-01T00:00:00Z')).runAt).toBe('2026-06-01T13:00:00.000Z');
  });

  it('keeps an explicit offset whatever the zone', async () => {
    expect((await at('2026-06-01T09:00:00+02:00', 'Asia/Tokyo', '2026-05-01T00:00:00Z')).runAt).toBe('2026-06-01T07:00:00.000Z');
  });

  it("defaults to the project's zone, else UTC", async () => {
    expect((await at('2026-06-01T09:00', undefined, '2026-05-01T00:00:00Z')).runAt).toBe('2026-06-01T09:00:00.000Z');
    const parisian = await createTenant(t);
    const patched = await request('PATCH', `/projects/${parisian.projectId}`, parisian.jwt, { settings: { timezone: 'Europe/Paris' } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(await at('2026-06-01T09:00', undefined, '2026-05-01T00:00:00Z', parisian)).toMatchObject({
      runAt: '2026-06-01T07:00:00.000Z',
      timezone: 'Europe/Paris',
    });
  });

  it('a time the clocks skip (spring forward) moves forward by the gap', async () => {
    expect(await at('2026-03-29T02:30', 'Europe/Paris', '2026-03-28T12:00:00Z')).toMatchObject({
      sendAt: '2026-03-29T03:30:00.000+02:00',
      runAt: '2026-03-29T01:30:00.000Z',
    });
    expect((await at('2026-03-08T02:30', 'America/New_York', '2026-03-01T00:00:00Z')).runAt).toBe('2026-03-08T07:30:00.000Z');
  });

  it('a time that happens twice (fall back) takes the earlier offset', async () => {
    expect(await at('2026-10-25T02:30', 'Europe/Paris', '2026-10-24T12:00:00Z')).toMatchObject({
      sendAt: '2026-10-25T02:30:00.000+02:00',
      runAt: '2026-10-25T00:30:00.000Z',
    });
    expect((await at('2026-11-01T01:30', 'America/New_York', '2026-10-31T00:00:00Z')).runAt).toBe('2026-11-01T05:30:00.000Z');
  });

  it('"in the future" is judged by the clock, in the campaign zone', async () => {
    fixedNow = new Date('2026-06-01T03:29:00Z'); // 08:59 in Kolkata
    try {
      const past = await request('POST', '/campaigns', tenant.jwt, body(tenant, { schedule: { mode: 'scheduled', sendAt: '2026-06-01T08:58', timezone: 'Asia/Kolkata' } }));
      expect(past.statusCode).toBe(422);
      const soon = await request('POST', '/campaigns', tenant.jwt, body(tenant, { schedule: { mode: 'scheduled', sendAt: '2026-06-01T09:00', timezone: 'Asia/Kolkata' } }));
      expect(soon.statusCode).toBe(201);
    } finally {
      fixedNow = undefined;
    }
  });

  it('dispatches a due scheduled campaign once, within the grace window', async () => {
    await audience(tenant, 3, { tags: ['due'] });
    fixedNow = new Date('2026-06-01T08:00:00Z');
    const created = await create(tenant, { schedule: { mode: 'scheduled', sendAt: '2026-06-01T09:00:00Z' }, segment: { filters: { tags: ['due'] } } }, tenant.test);
    fixedNow = new Date('2026-06-01T09:59:00Z'); // 59 minutes late: Herald was down, the grace window is 1 h
    try {
      await Promise.all([dispatch(tenant, created.id), dispatch(tenant, created.id)]);
    } finally {
      fixedNow = undefined;
    }
    const campaign = await read(tenant, created.id);
    expect(campaign).toMatchObject({ status: 'sending', stats: { queued: 3 } });
    expect(campaign.sentAt).toBe('2026-06-01T09:59:00.000Z');
    expect(await query('SELECT id FROM messages WHERE campaign_id = $1', [created.id])).toHaveLength(1);
  });

  it('fails a campaign whose time passed beyond the grace window (schedule_missed), never sending it', async () => {
    await audience(tenant, 2, { tags: ['missed'] });
    fixedNow = new Date('2026-06-01T08:00:00Z');
    const created = await create(tenant, { schedule: { mode: 'scheduled', sendAt: '2026-06-01T09:00:00Z' }, segment: { filters: { tags: ['missed'] } } }, tenant.test);
    fixedNow = new Date('2026-06-01T10:00:01Z');
    try {
      await dispatch(tenant, created.id);
      await dispatch(tenant, created.id);
    } finally {
      fixedNow = undefined;
    }
    expect(await read(tenant, created.id)).toMatchObject({ status: 'failed', failureReason: 'schedule_missed', stats: { queued: 0, sent: 0 } });
    expect(await messageOf(created.id)).toBeUndefined();
  });

  it('the sweep queues again a dispatch whose job was lost, and finishes a campaign whose last batch went unchecked', async () => {
    fixedNow = new Date(Date.now() - 3_600_000);
    const lost = await create(tenant, { schedule: { mode: 'scheduled', sendAt: new Date(Date.now() - 30 * 60_000).toISOString() } });
    fixedNow = undefined;
    await query('DELETE FROM graphile_worker._private_jobs WHERE key = $1', [dispatchJobKey(lost.id)]);
    await t.services.campaigns.sweep();
    expect(await query('SELECT 1 FROM graphile_worker.jobs WHERE key = $1', [dispatchJobKey(lost.id)])).toHaveLength(1);

    await audience(tenant, 2, { tags: ['unchecked'] });
    const created = await create(tenant, { schedule: { mode: 'immediate' }, segment: { filters: { tags: ['unchecked'] } } }, tenant.test);
    await dispatch(tenant, created.id);
    // A worker recorded every outcome, then died before it checked the campaign.
    const claimed = await deliveryRepo.claimDue(t.database.db, 'push', 1000, 60);
    await deliveryRepo.recordOutcomes(
      t.database.db,
      claimed.map((d) => ({ id: d.id, fence: d.attempts, attempts: d.attempts, status: 'sent', reason: null, providerCode: 'sandbox', delayMs: 0 })),
    );
    expect((await read(tenant, created.id)).status).toBe('sending');
    await t.services.campaigns.sweep();
    expect(await read(tenant, created.id)).toMatchObject({ status: 'sent', stats: { queued: 2, sent: 2 } });
  });
});

describe('PATCH /campaigns/:id', () => {
  it('edits a draft, field by field, and keeps it a draft', async () => {
    const draft = await create(tenant, { utm: { source: 'push' } });
    const res = await request('PATCH', `/campaigns/${draft.id}`, tenant.jwt, { name: 'Renamed', content: { title: 'New', body: 'Text' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: draft.id, status: 'draft', name: 'Renamed', content: { title: 'New', body: 'Text' }, utm: { source: 'push' } });
    const cleared = await request('PATCH', `/campaigns/${draft.id}`, tenant.jwt, { utm: null, projectId: tenant.projectId });
    expect(cleared.json()).toMatchObject({ utm: null, name: 'Renamed' });
  });

  it('a draft stays a draft whatever its schedule.mode becomes: nothing is scheduled or sent', async () => {
    await audience(tenant, 2, { tags: ['patched-mode'] });
    const draft = await create(tenant, { segment: { filters: { tags: ['patched-mode'] } } }, tenant.test);
    const sendAt = new Date(Date.now() + 86_400_000).toISOString();
    const scheduled = await request('PATCH', `/campaigns/${draft.id}`, tenant.test, { schedule: { mode: 'scheduled', sendAt } });
    expect(scheduled.statusCode, scheduled.body).toBe(200);
    expect(scheduled.json()).toMatchObject({ status: 'draft', schedule: { mode: 'scheduled', timezone: 'UTC' }, sentAt: null });
    expect(Date.parse(scheduled.json().schedule.sendAt)).toBe(Date.parse(sendAt));
    const immediate = await request('PATCH', `/campaigns/${draft.id}`, tenant.test, { schedule: { mode: 'immediate' } });
    expect(immediate.json()).toMatchObject({ status: 'draft', schedule: { mode: 'immediate', sendAt: null }, stats: { queued: 0 }, sentAt: null });
    expect(await query('SELECT 1 FROM graphile_worker.jobs WHERE key = $1', [dispatchJobKey(draft.id)])).toEqual([]);
    await dispatch(tenant, draft.id); // a stray job would not send it either
    expect(await messageOf(draft.id)).toBeUndefined();
    expect((await read(tenant, draft.id)).status).toBe('draft');
  });

  it('a sendAt given must be in the future; one stored earlier that has passed does not block other edits', async () => {
    fixedNow = new Date('2026-06-01T08:00:00Z');
    try {
      const draft = await create(tenant, { schedule: { mode: 'scheduled', sendAt: '2026-06-01T09:00:00Z' } });
      expect(draft.status).toBe('scheduled');
      const kept = await create(tenant);
      const past = await request('PATCH', `/campaigns/${kept.id}`, tenant.jwt, { schedule: { mode: 'scheduled', sendAt: '2026-06-01T07:00:00Z' } });
      expect(past.statusCode).toBe(422);
      expect(past.json().details).toEqual([{ field: 'schedule.sendAt', error: 'must be in the future' }]);
      await request('PATCH', `/campaigns/${kept.id}`, tenant.jwt, { schedule: { mode: 'scheduled', sendAt: '2026-06-01T09:00:00Z' } });
      fixedNow = new Date('2026-06-01T10:00:00Z');
      const renamed = await request('PATCH', `/campaigns/${kept.id}`, tenant.jwt, { name: 'Renamed later' });
      expect(renamed.statusCode, renamed.body).toBe(200);
      expect(renamed.json()).toMatchObject({ status: 'draft', name: 'Renamed later', schedule: { mode: 'scheduled', sendAt: '2026-06-01T09:00:00.000Z' } });
    } finally {
      fixedNow = undefined;
    }
  });

  it('validates like create, and refuses moving to another project', async () => {
    const draft = await create(tenant);
    expect((await request('PATCH', `/campaigns/${draft.id}`, tenant.jwt, { schedule: { mode: 'scheduled' } })).statusCode).toBe(422);
    expect((await request('PATCH', `/campaigns/${draft.id}`, tenant.jwt, { content: { title: 'x' } })).statusCode).toBe(422);
    const moved = await request('PATCH', `/campaigns/${draft.id}`, tenant.jwt, { projectId: other.projectId });
    expect(moved.statusCode).toBe(422);
    expect(moved.json().details).toEqual([{ field: 'projectId', error: 'a campaign cannot move to another project' }]);
  });

  it('answers 409 for scheduled, sending, sent, cancelled, failed and archived campaigns, changing nothing', async () => {
    const failed = await missedCampaign(tenant);
    const scheduled = await create(tenant, { schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 86_400_000).toISOString() } });
    await audience(tenant, 1, { tags: ['patch-409'] });
    const sending = await create(tenant, { schedule: { mode: 'immediate' }, segment: { filters: { tags: ['patch-409'] } } }, tenant.test);
    const sent = await sentCampaign(tenant);
    const cancelled = await create(tenant, { schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 86_400_000).toISOString() } });
    await request('POST', `/campaigns/${cancelled.id}/cancel`, tenant.jwt);
    const archived = await sentCampaign(tenant);
    await request('POST', `/campaigns/${archived.id}/archive`, tenant.jwt);
    for (const { id } of [scheduled, sending, sent, cancelled, failed, archived]) {
      const before = await read(tenant, id);
      const res = await request('PATCH', `/campaigns/${id}`, tenant.jwt, { name: 'Changed' });
      expect(res.statusCode, before.status).toBe(409);
      expect(res.json()).toMatchObject({ statusCode: 409, code: 'campaign_not_draft' });
      expect((await read(tenant, id)).name).toBe(before.name);
    }
  });
});

describe('DELETE /campaigns/:id', () => {
  it('removes draft, scheduled, cancelled and failed campaigns; a removed scheduled one never sends', async () => {
    const failed = await missedCampaign(tenant);
    const draft = await create(tenant);
    const scheduled = await create(tenant, { schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 86_400_000).toISOString() } });
    const cancelled = await create(tenant, { schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 86_400_000).toISOString() } });
    expect((await request('POST', `/campaigns/${cancelled.id}/cancel`, tenant.jwt)).statusCode).toBe(200);
    for (const { id } of [draft, scheduled, cancelled, failed]) {
      expect((await request('DELETE', `/campaigns/${id}`, tenant.jwt)).statusCode).toBe(204);
      expect((await request('GET', `/campaigns/${id}`, tenant.jwt)).statusCode).toBe(404);
      expect((await request('DELETE', `/campaigns/${id}`, tenant.jwt)).statusCode).toBe(404);
    }
    expect(await query('SELECT 1 FROM graphile_worker.jobs WHERE key = $1', [dispatchJobKey(scheduled.id)])).toEqual([]);
    await dispatch(tenant, scheduled.id);
    expect(await messageOf(scheduled.id)).toBeUndefined();
  });

  it('answers 409 for sent, archived and sending campaigns', async () => {
    const sent = await sentCampaign(tenant);
    const res = await request('DELETE', `/campaigns/${sent.id}`, tenant.jwt);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'campaign_not_deletable', message: expect.stringContaining('archive it instead') });
    await request('POST', `/campaigns/${sent.id}/archive`, tenant.jwt);
    expect((await request('DELETE', `/campaigns/${sent.id}`, tenant.jwt)).statusCode).toBe(409);
    await audience(tenant, 1, { tags: ['delete-sending'] });
    const sending = await create(tenant, { schedule: { mode: 'immediate' }, segment: { filters: { tags: ['delete-sending'] } } }, tenant.test);
    const refused = await request('DELETE', `/campaigns/${sending.id}`, tenant.jwt);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toMatch(/cancel it first/);
    expect((await read(tenant, sending.id)).status).toBe('sending');
  });
});

describe('POST /campaigns/:id/cancel and /archive', () => {
  it('a cancelled scheduled campaign never sends', async () => {
    const scheduled = await create(tenant, { schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 60_000).toISOString() } });
    const res = await request('POST', `/campaigns/${scheduled.id}/cancel`, tenant.jwt);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'cancelled' });
    expect(Date.parse(res.json().cancelledAt)).not.toBeNaN();
    await dispatch(tenant, scheduled.id);
    expect(await messageOf(scheduled.id)).toBeUndefined();
    expect((await read(tenant, scheduled.id)).status).toBe('cancelled');
  });

  it('a cancelled sending campaign sends nothing more; deliveries in flight finish and counts are kept', async () => {
    await audience(tenant, 10, { tags: ['cancel-sending'] });
    const created = await create(tenant, { schedule: { mode: 'immediate' }, segment: { filters: { tags: ['cancel-sending'] } } }, tenant.test);
    await dispatch(tenant, created.id);
    const message = (await messageOf(created.id))!;
    // Three go out first; two more are claimed by a worker and still in flight when the campaign is cancelled.
    await send(await deliveryRepo.claimDue(t.database.db, 'push', 3, 60));
    const inFlight = await deliveryRepo.claimDue(t.database.db, 'push', 2, 60);
    expect(inFlight).toHaveLength(2);

    const res = await request('POST', `/campaigns/${created.id}/cancel`, tenant.jwt);
    expect(res.json()).toMatchObject({ status: 'cancelled', stats: { queued: 10, sent: 3, suppressed: 5 } });
    // Their worker records them: one was accepted, the other hit a retryable error and goes back to the queue.
    const [accepted, retried] = inFlight as [deliveryRepo.ClaimedDelivery, deliveryRepo.ClaimedDelivery];
    await deliveryRepo.recordOutcomes(t.database.db, [
      { id: accepted.id, fence: accepted.attempts, attempts: accepted.attempts, status: 'sent', reason: null, providerCode: 'sandbox', delayMs: 0 },
      { id: retried.id, fence: retried.attempts, attempts: retried.attempts, status: 'queued', reason: 'provider_error', providerCode: 'http_503', delayMs: 0 },
    ]);
    // When a worker claims the retry, it is not sent.
    await drain();
    const [row] = await query<{ status: string; reason: string; sent_at: Date | null }>('SELECT status, reason, sent_at FROM deliveries WHERE id = $1', [
      retried.id,
    ]);
    expect(row).toEqual({ status: 'suppressed', reason: 'campaign_cancelled', sent_at: null });
    expect(await read(tenant, created.id)).toMatchObject({ status: 'cancelled', stats: { queued: 10, sent: 4, suppressed: 6, failed: 0 } });
    const statuses = await query<{ status: string; n: number }>(
      'SELECT status, count(*)::int AS n FROM deliveries WHERE message_id = $1 GROUP BY status ORDER BY status',
      [message.id],
    );
    expect(statuses).toEqual([
      { status: 'sent', n: 4 },
      { status: 'suppressed', n: 6 },
    ]);
  });

  it('answers 409 for draft, sent and cancelled campaigns', async () => {
    const draft = await create(tenant);
    const sent = await sentCampaign(tenant);
    for (const { id } of [draft, sent]) {
      const res = await request('POST', `/campaigns/${id}/cancel`, tenant.jwt);
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('campaign_not_cancellable');
    }
    const scheduled = await create(tenant, { schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 60_000).toISOString() } });
    await request('POST', `/campaigns/${scheduled.id}/cancel`, tenant.jwt);
    expect((await request('POST', `/campaigns/${scheduled.id}/cancel`, tenant.jwt)).statusCode).toBe(409);
  });

  it('archives a sent campaign: hidden from the default list, shown by status=archived', async () => {
    const sent = await sentCampaign(tenant, { name: 'To archive' });
    const res = await request('POST', `/campaigns/${sent.id}/archive`, tenant.jwt);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'archived', stats: sent.stats });
    const ids = async (qs: string) =>
      (await request('GET', `/campaigns/project/${tenant.projectId}?pageSize=100${qs}`, tenant.jwt)).json<{ data: { id: string }[] }>().data.map((c) => c.id);
    expect(await ids('')).not.toContain(sent.id);
    expect(await ids('&status=archived')).toContain(sent.id);
    expect((await request('POST', `/campaigns/${sent.id}/archive`, tenant.jwt)).statusCode).toBe(409);
    const draft = await create(tenant);
    expect((await request('POST', `/campaigns/${draft.id}/archive`, tenant.jwt)).json().code).toBe('campaign_not_archivable');
  });
});

describe('POST /campaigns/:id/send (a draft)', () => {
  it('sends a draft itself as its schedule says: immediate (or draft) → sending, scheduled → scheduled, answered 200', async () => {
    await audience(tenant, 2, { tags: ['send-draft'] });
    const segment = { filters: { tags: ['send-draft'] } };
    for (const mode of ['immediate', 'draft']) {
      const draft = await create(tenant, { segment }, tenant.test);
      if (mode === 'immediate') await request('PATCH', `/campaigns/${draft.id}`, tenant.test, { schedule: { mode } });
      const res = await request('POST', `/campaigns/${draft.id}/send`, tenant.test);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: draft.id, status: 'sending', resentFrom: null, schedule: { mode: 'immediate' }, stats: { queued: 2 } });
      expect(res.json().sentAt).not.toBeNull();
      expect(await query('SELECT 1 FROM graphile_worker.jobs WHERE key = $1', [dispatchJobKey(draft.id)])).toHaveLength(1);
      await dispatch(tenant, draft.id);
      await drain();
      expect(await read(tenant, draft.id)).toMatchObject({ status: 'sent', stats: { queued: 2, sent: 2 } });
      expect(await query('SELECT id FROM campaigns WHERE resent_from = $1', [draft.id])).toEqual([]);
    }

    const sendAt = new Date(Date.now() + 86_400_000).toISOString();
    const later = await create(tenant, { segment, schedule: { mode: 'scheduled', sendAt } });
    const draft = await create(tenant, { segment });
    await request('PATCH', `/campaigns/${draft.id}`, tenant.jwt, { schedule: { mode: 'scheduled', sendAt } });
    const res = await request('POST', `/campaigns/${draft.id}/send`, tenant.jwt);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: draft.id, status: 'scheduled', sentAt: null, stats: { queued: 0 } });
    const [job] = await query<{ run_at: Date }>('SELECT run_at FROM graphile_worker.jobs WHERE key = $1', [dispatchJobKey(draft.id)]);
    expect(job!.run_at.toISOString()).toBe(sendAt);
    expect(later.status).toBe('scheduled');
  });

  it('answers 422 for a draft whose sendAt has passed, or with a segment override, and leaves it a draft', async () => {
    fixedNow = new Date('2026-06-01T08:00:00Z');
    try {
      const draft = await create(tenant);
      await request('PATCH', `/campaigns/${draft.id}`, tenant.jwt, { schedule: { mode: 'scheduled', sendAt: '2026-06-01T09:00:00Z' } });
      fixedNow = new Date('2026-06-01T09:30:00Z');
      const late = await request('POST', `/campaigns/${draft.id}/send`, tenant.jwt);
      expect(late.statusCode).toBe(422);
      expect(late.json()).toMatchObject({ message: 'Validation failed', details: [{ field: 'schedule.sendAt', error: 'must be in the future' }] });
      const overridden = await request('POST', `/campaigns/${draft.id}/send`, tenant.jwt, { segment: { filters: {} } });
      expect(overridden.statusCode).toBe(422);
      expect(overridden.json().details).toEqual([{ field: 'segment', error: 'a draft is sent to its own segment: change it with PATCH first' }]);
      expect((await read(tenant, draft.id)).status).toBe('draft');
      expect(await query('SELECT 1 FROM graphile_worker.jobs WHERE key = $1', [dispatchJobKey(draft.id)])).toEqual([]);

      await request('PATCH', `/campaigns/${draft.id}`, tenant.jwt, { schedule: { mode: 'scheduled', sendAt: '2026-06-01T11:00:00Z' } });
      const res = await request('POST', `/campaigns/${draft.id}/send`, tenant.jwt);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().status).toBe('scheduled');
      const again = await request('POST', `/campaigns/${draft.id}/send`, tenant.jwt);
      expect(again.statusCode).toBe(409);
    } finally {
      fixedNow = undefined;
    }
  });
});

describe('POST /campaigns/:id/send (re-send)', () => {
  it('re-sends a sent campaign as a new campaign to the same segment, evaluated now; the original is unchanged', async () => {
    const original = await sentCampaign(tenant, { name: 'Weekly', utm: { campaign: 'weekly' }, content: { ...content, clickUrl: 'https://shop.example.com/' } });
    const tag = (original.segment as { filters: { tags: string[] } }).filters.tags[0]!;
    await audience(tenant, 2, { tags: [tag] }); // the audience grew since
    const res = await request('POST', `/campaigns/${original.id}/send`, tenant.test);
    expect(res.statusCode, res.body).toBe(201);
    const resent = res.json<CampaignBody>();
    expect(resent).toMatchObject({ name: 'Weekly', status: 'sending', resentFrom: original.id, sandbox: true, segment: original.segment, stats: { queued: 5, sent: 0 } });
    expect(resent.id).not.toBe(original.id);
    await dispatch(tenant, resent.id);
    await drain();
    expect(await read(tenant, resent.id)).toMatchObject({ status: 'sent', stats: { queued: 5, sent: 5 } });
    expect((await messageOf(resent.id))!.content.url).toBe('https://shop.example.com/?utm_campaign=weekly');
    const after = await read(tenant, original.id);
    expect(after).toMatchObject({ status: 'sent', stats: original.stats, resentFrom: null });
  });

  it('re-sends a cancelled campaign to an override segment', async () => {
    await audience(tenant, 2, { tags: ['override'] });
    const cancelled = await create(tenant, { schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 60_000).toISOString() } }, tenant.test);
    await request('POST', `/campaigns/${cancelled.id}/cancel`, tenant.test);
    const res = await request('POST', `/campaigns/${cancelled.id}/send`, tenant.test, { segment: { filters: { tags: ['override'] } } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ status: 'sending', segment: { filters: { tags: ['override'] } }, stats: { queued: 2 } });
    expect((await read(tenant, cancelled.id)).status).toBe('cancelled');
  });

  it('re-sends archived and failed campaigns too', async () => {
    const archived = await sentCampaign(tenant);
    await request('POST', `/campaigns/${archived.id}/archive`, tenant.jwt);
    const failed = await missedCampaign(tenant);
    for (const { id } of [archived, failed]) {
      const res = await request('POST', `/campaigns/${id}/send`, tenant.jwt);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ status: 'sending', resentFrom: id });
    }
  });

  it('answers 409 for scheduled and sending campaigns, and 422 for a bad override', async () => {
    const scheduled = await create(tenant, { schedule: { mode: 'scheduled', sendAt: new Date(Date.now() + 60_000).toISOString() } });
    await audience(tenant, 1, { tags: ['resend-409'] });
    const sending = await create(tenant, { schedule: { mode: 'immediate' }, segment: { filters: { tags: ['resend-409'] } } }, tenant.test);
    for (const { id } of [scheduled, sending]) {
      const res = await request('POST', `/campaigns/${id}/send`, tenant.jwt);
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('campaign_not_resendable');
    }
    const sent = await sentCampaign(tenant);
    expect((await request('POST', `/campaigns/${sent.id}/send`, tenant.jwt, { segment: { filters: { colour: 'red' } } })).statusCode).toBe(422);
    expect((await request('POST', `/campaigns/${sent.id}/send`, tenant.jwt, { segment: { savedSegmentId: 'seg_nope' } })).statusCode).toBe(422);
  });
});

describe('UTM parameters', () => {
  it('are appended to the click URL and every action URL of the message, keeping query and fragment', async () => {
    await audience(tenant, 1, { tags: ['utm'] });
    const created = await create(
      tenant,
      {
        schedule: { mode: 'immediate' },
        segment: { filters: { tags: ['utm'] } },
        content: {
          ...content,
          clickUrl: 'https://shop.example.com/sale?ref=a%20b&utm_source=old#top',
          actions: [
            { action: 'https://shop.example.com/buy?item=42', title: 'Buy' },
            { action: 'https://shop.example.com/later#list', title: 'Later' },
          ],
        },
        utm: { source: 'herald', medium: 'push', campaign: 'spring & summer' },
      },
      tenant.test,
    );
    // The campaign keeps the URLs as written; the push carries them with UTM.
    expect((created.content as { clickUrl: string }).clickUrl).toBe('https://shop.example.com/sale?ref=a%20b&utm_source=old#top');
    await dispatch(tenant, created.id);
    const { content: sent } = (await messageOf(created.id))!;
    expect(sent.url).toBe('https://shop.example.com/sale?ref=a%20b&utm_source=herald&utm_medium=push&utm_campaign=spring%20%26%20summer#top');
    expect(sent.actions).toEqual([
      { action: 'https://shop.example.com/buy?item=42&utm_source=herald&utm_medium=push&utm_campaign=spring%20%26%20summer', title: 'Buy' },
      { action: 'https://shop.example.com/later?utm_source=herald&utm_medium=push&utm_campaign=spring%20%26%20summer#list', title: 'Later' },
    ]);
  });
});

describe('push actions stored before `action` carried the URL', () => {
  it('are rewritten by the migration: `url` becomes the action, a button without a URL is dropped, and the campaign reads back', async () => {
    const draft = await create(tenant, { content: { ...content, actions: [{ action: 'https://shop.example.com/x', title: 'X' }] } });
    const old = [
      { action: 'buy', title: 'Buy', url: 'https://shop.example.com/buy' },
      { action: 'later', title: 'Later' },
    ];
    await query(`UPDATE campaigns SET content = jsonb_set(content, '{actions}', $2::jsonb) WHERE id = $1`, [draft.id, JSON.stringify(old)]);
    const file = (await readdir(migrationsFolder)).find((name) => name.endsWith('_push_action_urls.sql'))!;
    for (const statement of (await readFile(path.join(migrationsFolder, file), 'utf8')).split('--> statement-breakpoint')) await query(statement);
    expect((await read(tenant, draft.id)).content).toEqual({ ...content, actions: [{ action: 'https://shop.example.com/buy', title: 'Buy' }] });
  });
});

describe('GET /campaigns/project/:projectId', () => {
  let lister: Tenant;
  beforeAll(async () => {
    lister = await createTenant(t);
    for (const name of ['Alpha launch', 'Beta launch', 'Gamma 100%_off', 'Delta']) await create(lister, { name });
    await query(`UPDATE campaigns SET created_at = '2026-01-15T10:00:00Z' WHERE project_id = $1 AND name = 'Alpha launch'`, [lister.projectId]);
    await query(`UPDATE campaigns SET created_at = '2026-02-15T10:00:00Z' WHERE project_id = $1 AND name = 'Beta launch'`, [lister.projectId]);
  });

  const names = async (qs: string, headers?: Headers) => {
    const res = await request('GET', `/campaigns/project/${lister.projectId}${qs}`, headers ?? lister.jwt);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ data: { name: string }[]; total: number; page: number; pageSize: number }>();
  };

  it('lists newest first with pagination', async () => {
    const all = await names('');
    expect(all).toMatchObject({ total: 4, page: 1, pageSize: 20 });
    expect(all.data.map((c) => c.name)).toEqual(['Delta', 'Gamma 100%_off', 'Beta launch', 'Alpha launch']);
    const page2 = await names('?page=2&pageSize=3');
    expect(page2).toMatchObject({ total: 4, page: 2, pageSize: 3 });
    expect(page2.data.map((c) => c.name)).toEqual(['Alpha launch']);
  });

  it('filters by status, creation dates and name (case-insensitive, wildcards literal)', async () => {
    expect((await names('?q=LAUNCH')).data.map((c) => c.name).sort()).toEqual(['Alpha launch', 'Beta launch']);
    expect((await names('?q=100%25_')).data.map((c) => c.name)).toEqual(['Gamma 100%_off']);
    expect((await names('?q=_')).data.map((c) => c.name)).toEqual(['Gamma 100%_off']);
    expect((await names('?from=2026-01-01&to=2026-01-31')).data.map((c) => c.name)).toEqual(['Alpha launch']);
    expect((await names('?to=2026-02-15')).data.map((c) => c.name)).toEqual(['Beta launch', 'Alpha launch']);
    expect((await names('?from=2026-02-15T10:00:01Z&to=2026-03-01')).total).toBe(0);
    expect((await names('?status=draft')).total).toBe(4);
    expect((await names('?status=sent')).total).toBe(0);
    expect((await request('GET', `/campaigns/project/${lister.projectId}?status=done`, lister.jwt)).statusCode).toBe(422);
    expect((await request('GET', `/campaigns/project/${lister.projectId}?colour=red`, lister.jwt)).statusCode).toBe(422);
  });

  it('a test key sees sandbox campaigns only; a live key and the dashboard see both, each marked', async () => {
    const sandbox = await create(lister, { name: 'Sandboxed' }, lister.test);
    expect((await names('', lister.test)).data.map((c) => c.name)).toEqual(['Sandboxed']);
    expect((await names('', lister.live)).total).toBe(5);
    expect((await request('GET', `/campaigns/${sandbox.id}`, lister.live)).json().sandbox).toBe(true);
    const live = (await names('?q=Delta')).data[0] as unknown as { id: string };
    expect((await request('GET', `/campaigns/${live.id}`, lister.test)).statusCode).toBe(404);
    expect((await request('PATCH', `/campaigns/${live.id}`, lister.test, { name: 'x' })).statusCode).toBe(404);
    expect((await request('DELETE', `/campaigns/${live.id}`, lister.test)).statusCode).toBe(404);
  });
});

describe('GET /campaigns/:id stats', () => {
  it('counts delivered, clicked and dismissed from the tracking endpoints, once each, with both rates', async () => {
    await audience(tenant, 4, { tags: ['tracked'] });
    const created = await create(tenant, { schedule: { mode: 'immediate' }, segment: { filters: { tags: ['tracked'] } } }, tenant.test);
    await dispatch(tenant, created.id);
    await drain();
    const message = (await messageOf(created.id))!;
    const ids = (await query<{ id: number }>('SELECT id::float8 AS id FROM deliveries WHERE message_id = $1 ORDER BY id', [message.id])).map((r) => r.id);
    const track = (id: number, event: string) => t.app.inject({ method: 'POST', url: `/t/${t.services.tracking.sign(id)}/${event}` });
    await Promise.all([track(ids[0]!, 'delivered'), track(ids[0]!, 'delivered'), track(ids[0]!, 'clicked'), track(ids[0]!, 'clicked')]);
    await Promise.all([track(ids[1]!, 'delivered'), track(ids[1]!, 'dismissed'), track(ids[1]!, 'dismissed')]);
    await track(ids[2]!, 'clicked'); // a click without a delivered report implies it
    await track(ids[3]!, 'delivered');
    expect((await read(tenant, created.id)).stats).toEqual({
      queued: 4,
      sent: 4,
      delivered: 4,
      clicked: 2,
      dismissed: 1,
      failed: 0,
      suppressed: 0,
      ctr: 0.5,
      deliveryRate: 1,
    });
  });

  it('rates are 0, not NaN, before anything is sent', async () => {
    const draft = await create(tenant);
    expect((await read(tenant, draft.id)).stats).toEqual({
      queued: 0,
      sent: 0,
      delivered: 0,
      clicked: 0,
      dismissed: 0,
      failed: 0,
      suppressed: 0,
      ctr: 0,
      deliveryRate: 0,
    });
  });
});

describe('GET /campaigns/export/project/:projectId.csv', () => {
  let exporter: Tenant;
  beforeAll(async () => {
    exporter = await createTenant(t);
  });

  it('streams one row per campaign with the documented columns, neutralising formulas', async () => {
    const sent = await sentCampaign(exporter, { name: '=HYPERLINK("http://evil.example.com","x")' });
    const draft = await create(exporter, { name: '+cmd, "quoted"' });
    await query(`UPDATE campaigns SET created_at = '2025-12-31T23:59:59Z' WHERE id = $1`, [draft.id]);
    const res = await request('GET', `/campaigns/export/project/${exporter.projectId}.csv`, exporter.jwt);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="campaigns-${exporter.projectId}.csv"`);
    const lines = res.body.trimEnd().split('\n');
    expect(lines[0]).toBe('id,name,status,sandbox,createdAt,sentAt,completedAt,queued,sent,delivered,clicked,dismissed,failed,suppressed,ctr,deliveryRate');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(new RegExp(`^${draft.id},"'\\+cmd, ""quoted""",draft,false,2025-12-31T23:59:59.000Z,,,0,0,0,0,0,0,0,0,0$`));
    expect(lines[2]).toBe(
      `${sent.id},"'=HYPERLINK(""http://evil.example.com"",""x"")",sent,true,${sent.createdAt},${sent.sentAt},${sent.completedAt},3,3,0,0,0,0,0,0,0`,
    );
  });

  it('filters by creation date (UTC days, inclusive) and validates the range', async () => {
    const csv = async (qs: string) => (await request('GET', `/campaigns/export/project/${exporter.projectId}.csv${qs}`, exporter.jwt)).body.trimEnd().split('\n');
    expect(await csv('?from=2025-12-31&to=2025-12-31')).toHaveLength(2);
    expect(await csv('?to=2025-12-30')).toHaveLength(1);
    expect((await request('GET', `/campaigns/export/project/${exporter.projectId}.csv?from=2026-02-01&to=2026-01-01`, exporter.jwt)).statusCode).toBe(422);
    expect((await request('GET', `/campaigns/export/project/${exporter.projectId}.csv?from=yesterday`, exporter.jwt)).statusCode).toBe(422);
  });

  it('streams large exports across batches', async () => {
    const many = await createTenant(t);
    await query(
      `INSERT INTO campaigns (id, project_id, name, status, mode, sandbox, content, segment)
       SELECT 'cmp_bulk_' || i, $1, 'Bulk ' || i, 'draft', 'draft', false, '{"title":"t","body":"b"}', '{"filters":{}}' FROM generate_series(1, 1200) i`,
      [many.projectId],
    );
    const res = await request('GET', `/campaigns/export/project/${many.projectId}.csv`, many.jwt);
    const lines = res.body.trimEnd().split('\n');
    expect(lines).toHaveLength(1201);
    expect(new Set(lines.slice(1).map((line) => line.split(',')[0])).size).toBe(1200);
  });
});

describe('tenant isolation', () => {
  it('keeps every campaign route inside its organization and project', async () => {
    const mine = await sentCampaign(tenant);
    const draft = await create(tenant);
    const byId = [
      ['GET', `/campaigns/${mine.id}`, undefined],
      ['PATCH', `/campaigns/${draft.id}`, { name: 'x' }],
      ['DELETE', `/campaigns/${draft.id}`, undefined],
      ['POST', `/campaigns/${mine.id}/send`, undefined],
      ['POST', `/campaigns/${draft.id}/cancel`, undefined],
      ['POST', `/campaigns/${mine.id}/archive`, undefined],
    ] as const;
    for (const headers of [other.jwt, other.live, other.test]) {
      for (const [method, url, payload] of byId) {
        const res = await request(method, url, headers, payload);
        expect(res.statusCode, `${method} ${url}`).toBe(404);
      }
    }
    const byProject = [
      ['GET', `/campaigns/project/${tenant.projectId}`],
      ['GET', `/campaigns/export/project/${tenant.projectId}.csv`],
    ] as const;
    for (const [method, url] of byProject) {
      expect((await request(method, url, other.jwt)).statusCode, url).toBe(404);
      const keyed = await request(method, url, other.live);
      expect(keyed.statusCode, url).toBe(403);
      expect(keyed.json().message).toBe('Resource belongs to a different project');
    }
    const created = await request('POST', '/campaigns', other.live, body(tenant));
    expect(created.statusCode).toBe(403);
    expect((await request('POST', '/campaigns', other.jwt, body(tenant))).statusCode).toBe(404);
    // Nothing changed.
    expect((await read(tenant, draft.id)).status).toBe('draft');
    expect((await read(tenant, mine.id)).status).toBe('sent');
  });

  it('a VIEWER reads but cannot write; no credentials → 401', async () => {
    const viewer = await addMember(t, tenant, 'VIEWER');
    const draft = await create(tenant);
    expect((await request('GET', `/campaigns/${draft.id}`, viewer.headers)).statusCode).toBe(200);
    expect((await request('GET', `/campaigns/project/${tenant.projectId}`, viewer.headers)).statusCode).toBe(200);
    expect((await request('PATCH', `/campaigns/${draft.id}`, viewer.headers, { name: 'x' })).statusCode).toBe(403);
    expect((await request('POST', '/campaigns', viewer.headers, body(tenant))).statusCode).toBe(403);
    expect((await request('DELETE', `/campaigns/${draft.id}`, viewer.headers)).statusCode).toBe(403);
    expect((await request('GET', `/campaigns/${draft.id}`, {})).statusCode).toBe(401);
  });
});
