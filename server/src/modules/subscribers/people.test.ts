// The people list through HTTP: partial search, sort, names and reaching channels, bulk tag/untag/set attributes/delete and the CSV export.
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, CHROME_UA, createTenant, pushSubscription, startWithTwoTenants, type Tenant } from '../../../test/fixtures.js';
import type { TestApp } from '../../../test/harness.js';

let t: TestApp;
let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  ({ t, tenant, other } = await startWithTwoTenants());
});
afterAll(() => t.close());

type Headers = Record<string, string>;
interface Person {
  id: string;
  email: string | null;
  name: string | null;
  channels: string[];
  tags: string[];
}

async function contact(who: Tenant, fields: Record<string, unknown>, headers: Headers = who.jwt): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/contacts', headers, payload: { projectId: who.projectId, ...fields } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ id: string }>().id;
}

async function list(who: Tenant, query: Record<string, string>, headers: Headers = who.jwt) {
  const res = await t.app.inject({ method: 'GET', url: `/subscribers/project/${who.projectId}`, headers, query: { pageSize: '100', ...query } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ data: Person[]; total: number }>();
}

const bulk = (who: Tenant, payload: Record<string, unknown>, headers: Headers = who.jwt) =>
  t.app.inject({ method: 'POST', url: `/projects/${who.projectId}/subscribers/bulk`, headers, payload });

const exportCsv = (who: Tenant, payload: Record<string, unknown>, headers: Headers = who.jwt) =>
  t.app.inject({ method: 'POST', url: `/projects/${who.projectId}/subscribers/export`, headers, payload });

const fields = (res: { json: () => unknown }) => ((res.json() as { details?: { field: string }[] }).details ?? []).map((d) => d.field).sort();

describe('partial search (q)', () => {
  let ids: Record<'ada' | 'zoe' | 'chloe' | 'thousand' | 'underscore' | 'axb', string>;
  beforeAll(async () => {
    const who = tenant;
    ids = {
      ada: await contact(who, { email: 'ada.lovelace@example.com', attributes: { first_name: 'Ada', last_name: 'Lovelace' } }),
      zoe: await contact(who, { email: 'bob@corp.test', externalId: 'user-42', attributes: { name: "Zoë O'Brien-Smith" } }),
      chloe: await contact(who, { phone: '+44 20 7946 0958', attributes: { firstName: 'Chloé', lastName: '100%_real' } }),
      thousand: await contact(who, { email: 'thousand@x.test', attributes: { name: '1000 things' } }),
      underscore: await contact(who, { externalId: 'a_b', email: 'first@x.test' }),
      axb: await contact(who, { email: 'axb@y.test' }),
    };
  });

  const found = async (q: string) => (await list(tenant, { q })).data.map((row) => row.id).sort();

  it('matches any part of the email, external id, phone or name, whatever the case', async () => {
    expect(await found('LOVELACE')).toEqual([ids.ada]);
    expect(await found('ada.love')).toEqual([ids.ada]);
    expect(await found('user-4')).toEqual([ids.zoe]);
    expect(await found('7946')).toEqual([ids.chloe]);
    expect(await found('+44 20 7946-0958')).toEqual([ids.chloe]);
    expect(await found('(20) 7946')).toEqual([ids.chloe]);
    expect(await found("o'brien")).toEqual([ids.zoe]);
    expect(await found('ZOË')).toEqual([ids.zoe]);
    expect(await found('chloé 100')).toEqual([ids.chloe]);
    expect(await found('nobody-has-this')).toEqual([]);
  });

  it('takes % and _ literally', async () => {
    expect(await found('100%')).toEqual([ids.chloe]);
    expect(await found('a_b')).toEqual([ids.underscore]);
    expect(await found('%')).toEqual([ids.chloe]);
    expect(await found('_')).toEqual([ids.chloe, ids.underscore].sort());
  });

  it('answers each row with its readable name, or null', async () => {
    const rows = new Map((await list(tenant, {})).data.map((row) => [row.id, row]));
    expect(rows.get(ids.ada)!.name).toBe('Ada Lovelace');
    expect(rows.get(ids.zoe)!.name).toBe("Zoë O'Brien-Smith");
    expect(rows.get(ids.chloe)!.name).toBe('Chloé 100%_real');
    expect(rows.get(ids.axb)!.name).toBeNull();
    const detail = await t.app.inject({ method: 'GET', url: `/subscribers/${ids.ada}`, headers: tenant.jwt });
    expect(detail.json()).toMatchObject({ name: 'Ada Lovelace', channels: ['email'] });
  });

  it("confines the search to the caller's project and environment", async () => {
    expect((await list(other, { q: 'lovelace' })).total).toBe(0);
    expect((await list(tenant, { q: 'lovelace' }, tenant.test)).total).toBe(0);
  });

  it('refuses an empty search or an unknown sort, naming the field', async () => {
    const empty = await t.app.inject({ method: 'GET', url: `/subscribers/project/${tenant.projectId}?q=%20`, headers: tenant.jwt });
    expect(empty.statusCode).toBe(422);
    expect(fields(empty)).toEqual(['query.q']);
    const sort = await t.app.inject({ method: 'GET', url: `/subscribers/project/${tenant.projectId}?sort=phone&order=up`, headers: tenant.jwt });
    expect(sort.statusCode).toBe(422);
    expect(fields(sort)).toEqual(['query.order', 'query.sort']);
  });
});

describe('sort', () => {
  let who: Tenant;
  let rows: Record<string, string>;
  beforeAll(async () => {
    who = await createTenant(t);
    rows = {
      b: await contact(who, { email: 'b@x.test', attributes: { name: 'Same' } }),
      a: await contact(who, { email: 'A@x.test', attributes: { name: 'Zed' } }),
      c: await contact(who, { email: 'c@x.test', attributes: { name: 'Same' } }),
      none: await contact(who, { phone: '+14155550100', attributes: { name: 'Alpha' } }),
    };
    // lastSeenAt: b and c seen at the same instant, a later, none earlier.
    const at = (id: string, when: string) => t.database.db.execute(sql`update subscribers set last_seen_at = ${when}::timestamptz where id = ${id}`);
    await at(rows.b!, '2026-01-02T00:00:00Z');
    await at(rows.c!, '2026-01-02T00:00:00Z');
    await at(rows.a!, '2026-01-03T00:00:00Z');
    await at(rows.none!, '2026-01-01T00:00:00Z');
  });

  const order = async (sort: string, direction: string) => (await list(who, { sort, order: direction })).data.map((row) => row.id);
  const byId = (x: string, y: string) => (x < y ? -1 : 1);

  it('sorts by email both ways, case-insensitively, rows without one last', async () => {
    expect(await order('email', 'asc')).toEqual([rows.a, rows.b, rows.c, rows.none]);
    expect(await order('email', 'desc')).toEqual([rows.c, rows.b, rows.a, rows.none]);
  });

  it('sorts by name both ways, ties by id in the same direction', async () => {
    const same = [rows.b!, rows.c!].sort(byId);
    expect(await order('name', 'asc')).toEqual([rows.none, ...same, rows.a]);
    expect(await order('name', 'desc')).toEqual([rows.a, ...[...same].reverse(), rows.none]);
  });

  it('sorts by last seen both ways, ties by id', async () => {
    const same = [rows.b!, rows.c!].sort(byId);
    expect(await order('lastSeenAt', 'asc')).toEqual([rows.none, ...same, rows.a]);
    expect(await order('lastSeenAt', 'desc')).toEqual([rows.a, ...[...same].reverse(), rows.none]);
  });

  it('sorts by creation, newest first by default', async () => {
    const created = [rows.b, rows.a, rows.c, rows.none];
    expect(await order('createdAt', 'asc')).toEqual(created);
    expect((await list(who, {})).data.map((row) => row.id)).toEqual([...created].reverse());
  });
});

describe('channels reaching each row', () => {
  it('shows push for a device, email until the address is suppressed, phone channels, less what preferences turned off', async () => {
    const who = await createTenant(t);
    const device = await t.app.inject({
      method: 'POST',
      url: '/subscribers',
      headers: who.live,
      payload: { projectId: who.projectId, ...pushSubscription(), userAgent: CHROME_UA },
    });
    expect(device.statusCode, device.body).toBe(201);
    const deviceId = device.json<{ id: string }>().id;
    const emailOnly = await contact(who, { email: 'reach@x.test' });
    const phoneOnly = await contact(who, { phone: '+14155550101' });
    const noEmail = await contact(who, { email: 'quiet@x.test', phone: '+14155550102', preferences: { channels: { email: false } } });
    const channels = async () => new Map((await list(who, {})).data.map((row) => [row.id, row.channels]));

    let now = await channels();
    expect(now.get(deviceId)).toEqual(['push']);
    expect(now.get(emailOnly)).toEqual(['email']);
    expect(now.get(phoneOnly)).toEqual(['sms', 'whatsapp']);
    expect(now.get(noEmail)).toEqual(['sms', 'whatsapp']);

    const suppressed = await t.app.inject({
      method: 'POST',
      url: `/projects/${who.projectId}/suppressions`,
      headers: who.jwt,
      payload: { email: 'REACH@x.test', reason: 'bounced' },
    });
    expect(suppressed.statusCode, suppressed.body).toBeLessThan(300);
    now = await channels();
    expect(now.get(emailOnly)).toEqual([]);
    expect(now.get(deviceId)).toEqual(['push']);
  });
});

describe('bulk actions', () => {
  let who: Tenant;
  let ids: string[];
  beforeAll(async () => {
    who = await createTenant(t);
    ids = [];
    for (let i = 0; i < 4; i++) ids.push(await contact(who, { email: `bulk-${i}@x.test`, tags: i === 0 ? ['vip'] : [] }));
  });
  const tagsOf = async (id: string) => (await t.app.inject({ method: 'GET', url: `/subscribers/${id}`, headers: who.jwt })).json<Person>().tags;

  it('tags and untags by ids, counting the rows matched and changed', async () => {
    const tagged = await bulk(who, { action: 'tag', tags: ['vip', 'q3'], ids: ids.slice(0, 3) });
    expect(tagged.statusCode, tagged.body).toBe(200);
    expect(tagged.json()).toEqual({ matched: 3, changed: 3 });
    expect(await tagsOf(ids[0]!)).toEqual(['vip', 'q3']);
    expect(await tagsOf(ids[1]!)).toEqual(['vip', 'q3']);
    expect(await tagsOf(ids[3]!)).toEqual([]);
    const again = await bulk(who, { action: 'tag', tags: ['vip'], ids: ids.slice(0, 3) });
    expect(again.json()).toEqual({ matched: 3, changed: 0 });
    const untagged = await bulk(who, { action: 'untag', tags: ['q3'], ids: [ids[0]!, ids[3]!] });
    expect(untagged.json()).toEqual({ matched: 2, changed: 1 });
    expect(await tagsOf(ids[0]!)).toEqual(['vip']);
  });

  it('tags, untags and deletes by filter', async () => {
    const tagged = await bulk(who, { action: 'tag', tags: ['all'], filter: { q: 'bulk-' } });
    expect(tagged.json()).toEqual({ matched: 4, changed: 4 });
    const untagged = await bulk(who, { action: 'untag', tags: ['vip'], filter: { tag: 'vip' } });
    expect(untagged.json()).toEqual({ matched: 3, changed: 3 });
    expect((await list(who, { tag: 'vip' })).total).toBe(0);
    const deleted = await bulk(who, { action: 'delete', filter: { q: 'BULK-3' } });
    expect(deleted.json()).toEqual({ matched: 1, changed: 1 });
    expect((await t.app.inject({ method: 'GET', url: `/subscribers/${ids[3]}`, headers: who.jwt })).statusCode).toBe(404);
    const byIds = await bulk(who, { action: 'delete', ids: [ids[2]!, ids[3]!] });
    expect(byIds.json()).toEqual({ matched: 1, changed: 1 });
    expect((await list(who, { q: 'bulk-' })).total).toBe(2);
  });

  it('forgets the deleted in the transactional send log, unless another row of the project still carries the name', async () => {
    const gone = await contact(who, { email: 'Forget@x.test', externalId: 'forget-me' });
    const twin = await contact(who, { email: 'kept@x.test', externalId: 'shared' });
    await contact(who, { email: 'KEPT@x.test', externalId: 'shared' });
    const send = (recipient: Record<string, string>) =>
      t.database.db.execute(
        sql`insert into transactional_sends (id, project_id, channel, sandbox, recipient, outcome)
            values (${`txs_${Math.random().toString(36).slice(2)}`}, ${who.projectId}, 'email', false, ${JSON.stringify(recipient)}::jsonb, '{}'::jsonb)
            returning id`,
      );
    const sends = [
      await send({ to: 'forget@X.test' }),
      await send({ externalId: 'forget-me' }),
      await send({ to: 'kept@x.test' }),
      await send({ externalId: 'shared' }),
    ].map((result) => (result.rows[0] as { id: string }).id);
    const deleted = await bulk(who, { action: 'delete', ids: [gone, twin] });
    expect(deleted.json()).toEqual({ matched: 2, changed: 2 });
    const { rows } = await t.database.db.execute<{ id: string; recipient: Record<string, string> }>(
      sql`select id, recipient from transactional_sends where project_id = ${who.projectId}`,
    );
    const recipients = new Map(rows.map((row) => [row.id, row.recipient]));
    expect(sends.map((id) => recipients.get(id))).toEqual([{}, {}, { to: 'kept@x.test' }, { externalId: 'shared' }]);
  });

  it("matches nothing of another tenant's, nor a live row for a test key", async () => {
    const theirs = await contact(other, { email: 'theirs@x.test', tags: ['keep'] });
    const res = await bulk(who, { action: 'delete', ids: [theirs] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ matched: 0, changed: 0 });
    const untag = await bulk(who, { action: 'untag', tags: ['keep'], ids: [theirs] });
    expect(untag.json()).toEqual({ matched: 0, changed: 0 });
    const theirRow = await t.app.inject({ method: 'GET', url: `/subscribers/${theirs}`, headers: other.jwt });
    expect(theirRow.json<Person>().tags).toEqual(['keep']);
    // Naming another project: not the caller's.
    expect((await bulk(other, { action: 'delete', filter: {} }, who.jwt)).statusCode).toBe(404);
    expect((await bulk(other, { action: 'delete', filter: {} }, who.live)).statusCode).toBe(403);

    const sandboxRow = await contact(who, { email: 'sandbox@x.test' }, who.test);
    const sandbox = await bulk(who, { action: 'tag', tags: ['t'], filter: {} }, who.test);
    expect(sandbox.json()).toEqual({ matched: 1, changed: 1 });
    expect(await tagsOf(sandboxRow)).toEqual(['t']);
    expect(await tagsOf(ids[0]!)).not.toContain('t');
  });

  it('refuses a VIEWER, and names the field of a malformed request', async () => {
    const viewer = await addMember(t, who, 'VIEWER');
    const refused = await bulk(who, { action: 'delete', ids: [ids[0]!] }, viewer.headers);
    expect(refused.statusCode).toBe(403);
    expect((await list(who, {})).data.map((row) => row.id)).toContain(ids[0]);

    const both = await bulk(who, { action: 'delete', ids: [ids[0]!], filter: {} });
    expect(both.statusCode).toBe(422);
    expect(fields(both)).toEqual(['ids']);
    const neither = await bulk(who, { action: 'delete' });
    expect(fields(neither)).toEqual(['ids']);
    const noTags = await bulk(who, { action: 'tag', ids: [ids[0]!] });
    expect(fields(noTags)).toEqual(['tags']);
    const tooMany = await bulk(who, { action: 'untag', tags: ['x'], ids: Array.from({ length: 1001 }, (_, i) => `sub_${i}`) });
    expect(fields(tooMany)).toEqual(['ids']);
    const badFilter = await bulk(who, { action: 'delete', filter: { status: 'gone', q: '' } });
    expect(fields(badFilter)).toEqual(['filter.q', 'filter.status']);
  });
});

describe('bulk set_attributes', () => {
  let who: Tenant;
  let ids: string[];
  beforeAll(async () => {
    who = await createTenant(t);
    ids = [];
    for (let i = 0; i < 3; i++) ids.push(await contact(who, { email: `attr-${i}@x.test`, attributes: { keep: i } }));
  });
  const attributesOf = async (id: string) =>
    (await t.app.inject({ method: 'GET', url: `/subscribers/${id}`, headers: who.jwt })).json<{ attributes: Record<string, unknown> }>().attributes;
  const reach = async (filters: Record<string, unknown>) => {
    const res = await t.app.inject({ method: 'POST', url: '/segments/reach', headers: who.jwt, payload: { projectId: who.projectId, filters } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ count: number }>().count;
  };
  const listed = async () => {
    const res = await t.app.inject({ method: 'GET', url: `/projects/${who.projectId}/attributes`, headers: who.jwt });
    return res.json<{ data: { name: string; type: string; source: string }[] }>().data;
  };

  it('merges the attributes into the selected people, lists their types, and segments reach exactly them', async () => {
    const set = await bulk(who, { action: 'set_attributes', attributes: { score: 42, plan: 'pro' }, ids: ids.slice(0, 2) });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toEqual({ matched: 2, changed: 2 });
    expect(await attributesOf(ids[0]!)).toEqual({ keep: 0, score: 42, plan: 'pro' });
    expect(await attributesOf(ids[2]!)).toEqual({ keep: 2 });
    expect(await listed()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'score', type: 'number', source: 'inferred' }),
        expect.objectContaining({ name: 'plan', type: 'text', source: 'inferred' }),
      ]),
    );
    expect(await reach({ all: [{ attribute: 'score', operator: 'gte', value: 40 }] })).toBe(2);

    const again = await bulk(who, { action: 'set_attributes', attributes: { score: 42 }, filter: { q: 'attr-' } });
    expect(again.json()).toEqual({ matched: 3, changed: 1 });
    expect(await reach({ all: [{ attribute: 'score', operator: 'eq', value: 42 }] })).toBe(3);

    const removed = await bulk(who, { action: 'set_attributes', attributes: { score: null }, ids: [ids[0]!, ids[1]!] });
    expect(removed.json()).toEqual({ matched: 2, changed: 2 });
    expect(await attributesOf(ids[0]!)).toEqual({ keep: 0, plan: 'pro' });
    // Another tree than above (the reach is cached 30 s per tree): those removed no longer match.
    expect(await reach({ any: [{ attribute: 'score', operator: 'gte', value: 40 }] })).toBe(1);
    expect(await reach({ all: [{ attribute: 'score', operator: 'exists' }] })).toBe(1);
  });

  it('writes nothing when one merged result outgrows the cap, and names the field of a malformed request', async () => {
    await bulk(who, { action: 'set_attributes', attributes: { big: 'x'.repeat(15_000) }, ids: [ids[2]!] });
    const over = await bulk(who, { action: 'set_attributes', attributes: { other: 'y'.repeat(2_000) }, ids });
    expect(over.statusCode).toBe(422);
    expect(fields(over)).toEqual(['attributes']);
    expect(await attributesOf(ids[0]!)).not.toHaveProperty('other');
    expect((await listed()).map((a) => a.name)).not.toContain('other');

    expect(fields(await bulk(who, { action: 'set_attributes', ids }))).toEqual(['attributes']);
    expect(fields(await bulk(who, { action: 'set_attributes', attributes: {}, ids }))).toEqual(['attributes']);
    expect(fields(await bulk(who, { action: 'set_attributes', attributes: { ['n'.repeat(101)]: 1 }, ids }))).toEqual([`attributes.${'n'.repeat(101)}`]);
    expect(fields(await bulk(who, { action: 'set_attributes', attributes: { a: 1 }, tags: ['x'], ids }))).toEqual(['tags']);
    expect(fields(await bulk(who, { action: 'tag', tags: ['x'], attributes: { a: 1 }, ids }))).toEqual(['attributes']);
  });
});

describe('export', () => {
  it("streams the selected rows with the list's columns, by ids or by filter, to a VIEWER too", async () => {
    const who = await createTenant(t);
    const ada = await contact(who, { email: 'ada@x.test', externalId: 'u1', tags: ['a', 'b'], attributes: { name: '=HYPERLINK("x")' } });
    const bob = await contact(who, { phone: '+14155550103', attributes: { firstName: 'Bob' } });
    const theirs = await contact(other, { email: 'theirs-export@x.test' });

    const byIds = await exportCsv(who, { ids: [ada, bob, theirs] });
    expect(byIds.statusCode, byIds.body).toBe(200);
    expect(byIds.headers['content-type']).toMatch(/^text\/csv/);
    const lines = byIds.body.trim().split('\n');
    expect(lines[0]).toBe('id,name,email,phone,externalId,channels,status,tags,lastSeenAt,createdAt');
    expect(lines).toHaveLength(3);
    const adaLine = lines.find((line) => line.startsWith(ada))!;
    expect(adaLine).toContain(`"'=HYPERLINK(""x"")",ada@x.test,,u1,email,active,"a,b",`);
    const bobLine = lines.find((line) => line.startsWith(bob))!;
    expect(bobLine).toContain(',Bob,,+14155550103,,"sms,whatsapp",active,,');
    expect(byIds.body).not.toContain('theirs-export');

    const viewer = await addMember(t, who, 'VIEWER');
    const byFilter = await exportCsv(who, { filter: { q: 'bob' } }, viewer.headers);
    expect(byFilter.statusCode, byFilter.body).toBe(200);
    expect(byFilter.body.trim().split('\n')).toHaveLength(2);
    expect(byFilter.body).toContain(bob);

    const bad = await exportCsv(who, {});
    expect(bad.statusCode).toBe(422);
    expect(fields(bad)).toEqual(['ids']);
  });
});
