// Saved segments, reach estimates and the CSV export through HTTP on a real database, tenancy included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createTenant, startWithTwoTenants, type Tenant } from '../../../test/fixtures.js';
import type { TestApp } from '../../../test/harness.js';
import { seedSubscribers } from '../../../test/subscriber-seed.js';
import { newId } from '../../shared/ids.js';
import { escapeCell } from '../../http/csv.js';

let t: TestApp;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  ({ t, tenant, other } = await startWithTwoTenants());
});
afterAll(() => t.close());

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });

interface Row {
  projectId: string;
  externalId?: string | null;
  email?: string | null;
  country?: string | null;
  platform?: 'desktop' | 'mobile' | 'tablet' | null;
  tags?: string[];
  status?: 'active' | 'inactive' | 'unsubscribed';
  sandbox?: boolean;
  subscribedAt?: Date;
  lastSeenAt?: Date;
}

/** Inserts subscribers directly (country and email are not settable through the API yet). */
async function seed(rows: Row[]): Promise<string[]> {
  const ids: string[] = [];
  for (const row of rows) {
    const id = newId('sub');
    ids.push(id);
    await t.database.pool.query(
      `INSERT INTO subscribers (id, project_id, token, endpoint, external_id, email, country, platform, tags, status, sandbox,
                                subscribed_at, created_at, last_seen_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13)`,
      [
        id,
        row.projectId,
        `st_${id}`,
        `https://push.example.com/${id}`,
        row.externalId ?? null,
        row.email ?? null,
        row.country ?? null,
        row.platform ?? null,
        row.tags ?? [],
        row.status ?? 'active',
        row.sandbox ?? false,
        row.subscribedAt ?? new Date(),
        row.lastSeenAt ?? new Date(),
      ],
    );
  }
  return ids;
}

async function createSegment(who: Tenant, filters: Record<string, unknown>, name = 'Segment', headers: Headers = who.jwt) {
  const res = await request('POST', '/segments', headers, { projectId: who.projectId, name, filters });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string; name: string; filters: Record<string, unknown> }>();
}

describe('saved segments', () => {
  it('creates, reads, lists, updates and deletes a segment', async () => {
    const created = await request('POST', '/segments', tenant.jwt, {
      projectId: tenant.projectId,
      name: 'French VIPs',
      filters: { country: ['fr'], tags: { all: ['vip'] }, lastSeenDays: 30 },
    });
    expect(created.statusCode).toBe(201);
    const segment = created.json();
    expect(segment).toMatchObject({
      projectId: tenant.projectId,
      name: 'French VIPs',
      filters: { country: ['FR'], tags: { all: ['vip'] }, lastSeenDays: 30 },
    });
    expect(segment.id).toMatch(/^seg_/);
    expect(Date.parse(segment.createdAt)).not.toBeNaN();

    expect((await request('GET', `/segments/${segment.id}`, tenant.live)).json()).toEqual(segment);

    const list = await request('GET', `/segments/project/${tenant.projectId}`, tenant.jwt);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ page: 1, pageSize: 20 });
    expect(list.json().data.map((s: { id: string }) => s.id)).toContain(segment.id);

    const patched = await request('PATCH', `/segments/${segment.id}`, tenant.jwt, { name: 'French', filters: { country: 'FR' } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ id: segment.id, name: 'French', filters: { country: 'FR' } });
    expect(Date.parse(patched.json().updatedAt)).toBeGreaterThanOrEqual(Date.parse(segment.updatedAt));

    expect((await request('DELETE', `/segments/${segment.id}`, tenant.jwt)).statusCode).toBe(204);
    expect((await request('GET', `/segments/${segment.id}`, tenant.jwt)).statusCode).toBe(404);
    expect((await request('DELETE', `/segments/${segment.id}`, tenant.jwt)).statusCode).toBe(404);
  });

  it.each<[Record<string, unknown>, string]>([
    [{ colour: 'red' }, 'filters.colour'],
    [{ platform: 'tv' }, 'filters.platform'],
    [{ tags: { some: ['a'] } }, 'filters.tags.some'],
    [{ lastSeenDays: 0 }, 'filters.lastSeenDays'],
    [{ emailStatus: ['pending'] }, 'filters.emailStatus'],
    [{ subscriptionDate: { from: '2024-02-01', to: '2024-01-01' } }, 'filters.subscriptionDate'],
  ])('rejects filters %j with 422 naming %s', async (filters, field) => {
    const res = await request('POST', '/segments', tenant.jwt, { projectId: tenant.projectId, name: 'x', filters });
    expect(res.statusCode).toBe(422);
    expect(res.json().details.map((d: { field: string }) => d.field).join(' ')).toContain(field);
  });

  it('validates PATCH bodies the same way', async () => {
    const segment = await createSegment(tenant, {});
    const res = await request('PATCH', `/segments/${segment.id}`, tenant.jwt, { filters: { planet: 'Mars' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().details).toContainEqual({ field: 'filters.planet', error: 'is not an allowed field' });
  });

  it('keeps segments inside their project', async () => {
    const segment = await createSegment(tenant, { platform: 'desktop' });
    for (const headers of [other.jwt, other.live, other.test]) {
      expect((await request('GET', `/segments/${segment.id}`, headers)).statusCode).toBe(404);
      expect((await request('PATCH', `/segments/${segment.id}`, headers, { name: 'stolen' })).statusCode).toBe(404);
      expect((await request('DELETE', `/segments/${segment.id}`, headers)).statusCode).toBe(404);
    }
    expect((await request('GET', `/segments/project/${tenant.projectId}`, other.jwt)).statusCode).toBe(404);
    expect((await request('GET', `/segments/project/${tenant.projectId}`, other.live)).statusCode).toBe(403);
    expect((await request('POST', '/segments', other.jwt, { projectId: tenant.projectId, name: 'x', filters: {} })).statusCode).toBe(404);
    expect((await request('POST', '/segments', other.live, { projectId: tenant.projectId, name: 'x', filters: {} })).statusCode).toBe(403);
    expect((await request('GET', `/segments/${segment.id}`, tenant.jwt)).json().name).toBe('Segment');
  });

  it('lets a VIEWER read but not write', async () => {
    const viewer = await addMember(t, tenant, 'VIEWER');
    const segment = await createSegment(tenant, {});
    expect((await request('GET', `/segments/${segment.id}`, viewer.headers)).statusCode).toBe(200);
    expect((await request('PATCH', `/segments/${segment.id}`, viewer.headers, { name: 'x' })).statusCode).toBe(403);
    expect((await request('POST', '/segments', viewer.headers, { projectId: tenant.projectId, name: 'x', filters: {} })).statusCode).toBe(
      403,
    );
  });
});

describe('POST /segments/reach', () => {
  let owner: Tenant;

  beforeAll(async () => {
    owner = await createTenant(t);
    await seed([
      { projectId: owner.projectId, country: 'FR', platform: 'desktop', tags: ['vip'] },
      { projectId: owner.projectId, country: 'FR', platform: 'mobile', tags: [] },
      { projectId: owner.projectId, country: 'US', platform: 'desktop', tags: ['vip'] },
      { projectId: owner.projectId, country: 'FR', platform: 'desktop', tags: ['vip'], status: 'unsubscribed' },
      { projectId: owner.projectId, country: 'FR', platform: 'desktop', tags: ['vip'], sandbox: true },
    ]);
  });

  const reach = (body: Record<string, unknown>, headers: Headers = owner.jwt) =>
    request('POST', '/segments/reach', headers, { projectId: owner.projectId, ...body });

  it('counts the active live subscribers matching inline filters exactly', async () => {
    const res = await reach({ filters: { country: 'FR' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ count: 2, cached: false });
    expect((await reach({ filters: { country: 'FR', tags: ['vip'] } })).json().count).toBe(1);
    expect((await reach({ filters: {} })).json().count).toBe(3);
  });

  it('counts sandbox subscribers for a test key', async () => {
    expect((await reach({ filters: { country: 'FR', tags: ['vip'] } }, owner.test)).json().count).toBe(1);
    expect((await reach({ filters: { country: 'US' } }, owner.test)).json().count).toBe(0);
  });

  it('counts a saved segment, and caches the count 30 s per (project, filters)', async () => {
    const segment = await createSegment(owner, { platform: 'desktop' });
    const first = await reach({ segmentId: segment.id });
    expect(first.json()).toMatchObject({ count: 2, cached: false });
    await seed([{ projectId: owner.projectId, platform: 'desktop' }]);
    const second = await reach({ filters: { platform: ['desktop'] } });
    const third = await reach({ filters: { platform: 'desktop' } });
    // Same filters (inline or saved) within 30 s: the cached count.
    expect(third.json()).toMatchObject({ count: 2, cached: true, computedAt: first.json().computedAt });
    // platform: ['desktop'] is another key (array form): counted afresh.
    expect(second.json()).toMatchObject({ count: 3, cached: false });
  });

  it('requires exactly one of filters and segmentId, and a segment of the project', async () => {
    expect((await reach({})).statusCode).toBe(422);
    const segment = await createSegment(owner, {});
    expect((await reach({ filters: {}, segmentId: segment.id })).statusCode).toBe(422);
    expect((await reach({ segmentId: 'seg_unknown' })).statusCode).toBe(404);
    const foreign = await createSegment(other, {});
    expect((await reach({ segmentId: foreign.id })).statusCode).toBe(404);
    expect((await reach({ filters: { mood: 'happy' } })).json().details[0].field).toBe('filters.mood');
  });

  it('with channel push, counts what a push campaign to the same filters queues', async () => {
    const who = await createTenant(t);
    await seedSubscribers(t.database.pool, who.projectId, [
      { tags: ['vip'] },
      { tags: ['vip'] },
      { tags: ['vip'], endpoint: null }, // a contact without push
      { tags: ['vip'], push: false }, // turned push off
      { tags: ['vip'], push: true },
    ]);
    const filters = { tags: ['vip'] };
    const count = async (channel?: string) => {
      const res = await request('POST', '/segments/reach', who.live, { projectId: who.projectId, filters, ...(channel && { channel }) });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().count;
    };
    expect(await count()).toBe(5);
    expect(await count('push')).toBe(3);
    const campaign = await request('POST', '/campaigns', who.live, {
      projectId: who.projectId,
      name: 'Reach check',
      content: { title: 'Hello', body: 'World' },
      schedule: { mode: 'immediate' },
      segment: { filters },
    });
    expect(campaign.statusCode, campaign.body).toBe(201);
    expect(campaign.json().stats.queued).toBe(3);
    const bad = await request('POST', '/segments/reach', who.live, { projectId: who.projectId, filters, channel: 'fax' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().details[0].field).toBe('channel');
  });

  it('answers other tenants with 404 (users) and 403 (keys)', async () => {
    expect((await reach({ filters: {} }, other.jwt)).statusCode).toBe(404);
    expect((await reach({ filters: {} }, other.live)).statusCode).toBe(403);
    expect((await reach({ filters: {} }, other.test)).statusCode).toBe(403);
  });
});

describe('GET /segments/project/:projectId/export.csv', () => {
  let owner: Tenant;

  beforeAll(async () => {
    owner = await createTenant(t);
  });

  const exportCsv = (segmentId: string, headers: Headers = owner.jwt, projectId = owner.projectId) =>
    request('GET', `/segments/project/${projectId}/export.csv?segmentId=${segmentId}`, headers);

  it('streams the matching subscribers with the spec columns, neutralising formulas', async () => {
    const subscribedAt = new Date('2024-05-01T10:00:00.000Z');
    const lastSeenAt = new Date('2025-01-02T03:04:05.006Z');
    await seed([
      {
        projectId: owner.projectId,
        externalId: '=HYPERLINK("http://evil")',
        email: '+33@example.com',
        country: 'FR',
        platform: 'desktop',
        tags: ['vip', '@home'],
        subscribedAt,
        lastSeenAt,
      },
      { projectId: owner.projectId, externalId: '-1', country: 'FR', platform: 'mobile', tags: ['vip'], subscribedAt, lastSeenAt },
      { projectId: owner.projectId, externalId: 'plain, "quoted"', country: 'US', tags: ['vip'], subscribedAt, lastSeenAt },
      { projectId: owner.projectId, externalId: 'not-vip', country: 'FR', tags: [] },
      { projectId: owner.projectId, externalId: 'gone', country: 'FR', tags: ['vip'], status: 'unsubscribed' },
    ]);
    const segment = await createSegment(owner, { tags: ['vip'] });
    const res = await exportCsv(segment.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toContain('attachment');
    const lines = res.body.trimEnd().split('\n');
    expect(lines[0]).toBe('externalId,token,email,country,platform,tags,subscribedAt,lastSeenAt');
    expect(lines).toHaveLength(4);
    const body = lines.slice(1).join('\n');
    expect(body).toContain(`"'=HYPERLINK(""http://evil"")",`);
    expect(body).toContain(`,'+33@example.com,FR,desktop,"vip,@home",2024-05-01T10:00:00.000Z,2025-01-02T03:04:05.006Z`);
    expect(body).toContain(`'-1,`);
    expect(body).toContain(`"plain, ""quoted""",`);
    expect(body).not.toContain('not-vip');
    expect(body).not.toContain('gone');
  });

  it('streams large audiences across batches', async () => {
    const big = await createTenant(t);
    await t.database.pool.query(
      `INSERT INTO subscribers (id, project_id, token, endpoint, tags)
       SELECT 'sub_bulk' || lpad(g::text, 6, '0'), $1, 'st_bulk' || g, 'https://push.example.com/bulk/' || g,
              CASE WHEN g % 2 = 0 THEN '{even}'::text[] ELSE '{}'::text[] END
       FROM generate_series(1, 4500) AS g`,
      [big.projectId],
    );
    const segment = await createSegment(big, { tags: ['even'] });
    const res = await exportCsv(segment.id, big.live, big.projectId);
    expect(res.statusCode).toBe(200);
    const lines = res.body.trimEnd().split('\n');
    expect(lines).toHaveLength(2251);
    expect(new Set(lines.slice(1).map((line) => line.split(',')[1])).size).toBe(2250);
  });

  it('answers 404 for an unknown or foreign segment and guards the project', async () => {
    expect((await exportCsv('seg_unknown')).statusCode).toBe(404);
    const foreign = await createSegment(other, {});
    expect((await exportCsv(foreign.id)).statusCode).toBe(404);
    const mine = await createSegment(owner, {});
    expect((await exportCsv(mine.id, other.jwt)).statusCode).toBe(404);
    expect((await exportCsv(mine.id, other.live)).statusCode).toBe(403);
    expect((await request('GET', `/segments/project/${owner.projectId}/export.csv`, owner.jwt)).statusCode).toBe(422);
  });
});

describe('escapeCell', () => {
  it.each([
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    ['\0x', "'\0x"],
    ['a=1', 'a=1'],
    ['', ''],
  ])('%j → %j', (input, output) => {
    expect(escapeCell(input)).toBe(output);
  });
  it('writes null as an empty cell', () => expect(escapeCell(null)).toBe(''));
});

describe('DELETE /segments/:id while campaigns will read it', () => {
  const campaign = async (segmentId: string, schedule: Record<string, unknown>) => {
    const res = await request('POST', '/campaigns', tenant.jwt, {
      projectId: tenant.projectId,
      name: 'Uses a segment',
      content: { title: 'Hi', body: 'There' },
      segment: { savedSegmentId: segmentId },
      schedule,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: string }>().id;
  };

  it('answers 409 while a draft or scheduled campaign references it, and deletes it once they no longer do', async () => {
    const segment = await createSegment(tenant, { country: 'FR' });
    const draft = await campaign(segment.id, { mode: 'draft' });
    const scheduled = await campaign(segment.id, { mode: 'scheduled', sendAt: new Date(Date.now() + 86_400_000).toISOString() });

    const refused = await request('DELETE', `/segments/${segment.id}`, tenant.jwt);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ statusCode: 409, code: 'segment_in_use' });
    expect((await request('GET', `/segments/${segment.id}`, tenant.jwt)).statusCode).toBe(200);

    // The draft now uses inline filters; the scheduled one is cancelled: nothing will read the segment any more.
    expect((await request('PATCH', `/campaigns/${draft}`, tenant.jwt, { segment: { filters: {} } })).statusCode).toBe(200);
    expect((await request('DELETE', `/segments/${segment.id}`, tenant.jwt)).statusCode).toBe(409);
    expect((await request('POST', `/campaigns/${scheduled}/cancel`, tenant.jwt)).statusCode).toBe(200);
    expect((await request('DELETE', `/segments/${segment.id}`, tenant.jwt)).statusCode).toBe(204);
  });

  it('does not hold a segment for campaigns that already read it', async () => {
    const segment = await createSegment(tenant, { country: 'AQ' }); // nobody: the campaign is sent at once
    const sent = await campaign(segment.id, { mode: 'immediate' });
    await t.services.campaigns.dispatch(tenant.projectId, sent);
    expect((await request('GET', `/campaigns/${sent}`, tenant.jwt)).json()).toMatchObject({ status: 'sent', segment: { savedSegmentId: segment.id } });
    expect((await request('DELETE', `/segments/${segment.id}`, tenant.jwt)).statusCode).toBe(204);
    // A re-send then needs another segment.
    const resent = await request('POST', `/campaigns/${sent}/send`, tenant.jwt);
    expect(resent.statusCode).toBe(422);
    expect(resent.json().details).toEqual([{ field: 'segment.savedSegmentId', error: 'is not a saved segment of this project and environment' }]);
    expect((await request('POST', `/campaigns/${sent}/send`, tenant.jwt, { segment: { filters: { country: 'AQ' } } })).statusCode).toBe(201);
  });
});
