// CSV import with a column mapping and attribute types (issue 29, "data in"), through HTTP on a real database.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWithTwoTenants, type Tenant } from '../../../test/fixtures.js';
import type { TestApp } from '../../../test/harness.js';

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  ({ t, tenant } = await startWithTwoTenants());
});
afterAll(() => t.close());

interface Details {
  details?: { field: string; error: string }[];
}

const uid = () => randomBytes(6).toString('hex');
const query = (params: Record<string, unknown>) =>
  new URLSearchParams(
    Object.entries({ projectId: tenant.projectId, ...params }).map(([key, value]): [string, string] => [key, typeof value === 'string' ? value : JSON.stringify(value)]),
  ).toString();
const importCsv = (csv: string, params: Record<string, unknown> = {}) =>
  t.app.inject({
    method: 'POST',
    url: `/contacts/import?${query(params)}`,
    headers: { ...tenant.live, 'content-type': 'text/csv' },
    payload: csv,
  });
const details = (res: { json: () => unknown }) => (res.json() as Details).details ?? [];
const fields = (res: { json: () => unknown }) => details(res).map((d) => d.field).sort();

async function stored(externalId: string) {
  const { rows } = await t.database.db.execute<{ email: string | null; tags: string[]; attributes: Record<string, unknown> }>(
    sql`select email, tags, attributes from subscribers where project_id = ${tenant.projectId} and external_id = ${externalId}`,
  );
  return rows[0];
}
async function countRows() {
  const { rows } = await t.database.db.execute<{ n: number }>(sql`select count(*)::int as n from subscribers where project_id = ${tenant.projectId}`);
  return rows[0]!.n;
}

describe('POST /contacts/import (CSV) with a mapping and types', () => {
  it('sends columns with any header to fields and attributes, skips the null ones, and stores typed values', async () => {
    const key = uid();
    const csv = [
      'Customer ID,E-mail,First name,Score,Seats,VIP,Signed up,Last order,Notes,Labels',
      `${key}-1,ada-${key}@example.com,Ada,"1,234.5",-3,Yes,2024-03-01,2024-03-01T10:30:00+02:00,secret,vip|beta`,
      `${key}-2,,=SUM(A1),42,,0,,2024-03-02T08:00:00,,`,
    ].join('\n');
    const res = await importCsv(csv, {
      mapping: {
        'Customer ID': 'externalId',
        'E-mail': 'email',
        'First name': 'attributes.first_name',
        Score: 'attributes.score',
        Seats: 'attributes.seats',
        VIP: 'attributes.vip',
        'Signed up': 'attributes.signed_up',
        'Last order': 'attributes.last_order',
        Notes: null,
        Labels: 'tags',
      },
      types: { score: 'number', seats: 'number', vip: 'boolean', signed_up: 'date', last_order: 'date', first_name: 'text' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ created: 2, updated: 0, total: 2 });
    expect(await stored(`${key}-1`)).toEqual({
      email: `ada-${key}@example.com`,
      tags: ['vip', 'beta'],
      attributes: {
        first_name: 'Ada',
        score: 1234.5,
        seats: -3,
        vip: true,
        signed_up: '2024-03-01T00:00:00.000Z',
        last_order: '2024-03-01T08:30:00.000Z',
      },
    });
    // Text stays as written; empty cells are left out; a date-time without an offset is UTC.
    expect(await stored(`${key}-2`)).toEqual({
      email: null,
      tags: [],
      attributes: { first_name: '=SUM(A1)', score: 42, vip: false, last_order: '2024-03-02T08:00:00.000Z' },
    });
  });

  it("declares the types given in the project's attribute list, over an inferred type; a refused import declares nothing", async () => {
    const list = async () =>
      (await t.app.inject({ method: 'GET', url: `/projects/${tenant.projectId}/attributes`, headers: tenant.jwt })).json<{
        data: { name: string; type: string; source: string }[];
      }>().data;
    const key = uid();
    // zip is declared a number by one import, then text by a later one; a refused import in between declares nothing.
    expect((await importCsv(`externalId,attributes.zip_${key}\n${key}-0,75001\n`, { types: { [`zip_${key}`]: 'number' } })).statusCode).toBe(200);
    const refused = await importCsv(`externalId,Plan,Zip\n${key}-1,pro,x\n`, {
      mapping: { Plan: `attributes.plan_${key}`, Zip: `attributes.zip_${key}` },
      types: { [`plan_${key}`]: 'text', [`zip_${key}`]: 'number' },
    });
    expect(refused.statusCode).toBe(422);
    expect((await list()).filter((a) => a.name.endsWith(key))).toEqual([expect.objectContaining({ name: `zip_${key}`, type: 'number', source: 'declared' })]);

    const res = await importCsv(`externalId,Plan,Zip\n${key}-1,pro,01234\n`, {
      mapping: { Plan: `attributes.plan_${key}`, Zip: `attributes.zip_${key}` },
      types: { [`plan_${key}`]: 'text', [`zip_${key}`]: 'text' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await stored(`${key}-1`)).toMatchObject({ attributes: { [`plan_${key}`]: 'pro', [`zip_${key}`]: '01234' } });
    expect((await list()).filter((a) => a.name.endsWith(key))).toEqual([
      expect.objectContaining({ name: `plan_${key}`, type: 'text', source: 'declared' }),
      expect.objectContaining({ name: `zip_${key}`, type: 'text', source: 'declared' }),
    ]);
  });

  it('reads columns left out of the mapping by their header, and types attribute columns named the usual way', async () => {
    const key = uid();
    const res = await importCsv(`externalId,Mail,attributes.age\n${key},m-${key}@example.com,7\n`, { mapping: { Mail: 'email' }, types: { age: 'number' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await stored(key)).toMatchObject({ email: `m-${key}@example.com`, attributes: { age: 7 } });
  });

  it('reports every cell that does not read as its type with the other row errors, naming the row and column; writes nothing', async () => {
    const before = await countRows();
    const key = uid();
    const csv = [
      'id,Score,VIP,Since,email',
      `${key}-1,12abc,maybe,yesterday,ok@example.com`,
      `${key}-2,"1,5",1,2024-02-30,not-an-email`,
      `${key}-3,"12,34",true,2024-01-01,`,
      `${key}-4,1.000.000,no,2024-13-01T00:00:00Z,`,
      `${key}-5,1e3,No,2024-01-01,`,
    ].join('\n');
    const res = await importCsv(csv, {
      mapping: { id: 'externalId', Score: 'attributes.score', VIP: 'attributes.vip', Since: 'attributes.since' },
      types: { score: 'number', vip: 'boolean', since: 'date' },
    });
    expect(res.statusCode).toBe(422);
    expect(fields(res)).toEqual([
      'rows[0].attributes.score',
      'rows[0].attributes.since',
      'rows[0].attributes.vip',
      'rows[1].attributes.score',
      'rows[1].attributes.since',
      'rows[1].email',
      'rows[2].attributes.score',
      'rows[3].attributes.score',
      'rows[3].attributes.since',
      'rows[4].attributes.score',
    ]);
    expect(details(res).find((d) => d.field === 'rows[0].attributes.score')!.error).toBe('column "Score": "12abc" is not a number (such as 1234.5 or 1,234.5)');
    expect(details(res).find((d) => d.field === 'rows[0].attributes.vip')!.error).toMatch(/^column "VIP": "maybe" is not true\/false, yes\/no or 1\/0$/);
    expect(details(res).find((d) => d.field === 'rows[0].attributes.since')!.error).toMatch(/^column "Since": "yesterday" is not an ISO 8601 date/);
    expect(await countRows()).toBe(before);
  });

  it('refuses a mapping that does not fit the file: unknown targets, headers or columns, two columns to one field, types of no column', async () => {
    const before = await countRows();
    const csv = 'id,Mail,Other mail,Nick\nx,a@example.com,b@example.com,y\n';
    const res = await importCsv(csv, {
      mapping: { id: 'externalId', Mail: 'email', 'Other mail': 'email', Missing: 'phone' },
      types: { nick: 'text' },
    });
    expect(res.statusCode).toBe(422);
    expect(details(res)).toEqual(
      expect.arrayContaining([
        { field: 'columns.Other mail', error: 'goes to email, as column "Mail" does' },
        { field: 'columns.Nick', error: 'is not a known column: map it to a field or skip it' },
        { field: 'query.mapping.Missing', error: 'is not a column of the file' },
        { field: 'query.types.nick', error: 'no column goes to attributes.nick' },
      ]),
    );
    expect(details(res)).toHaveLength(4);

    const target = await importCsv(csv, { mapping: { Nick: 'nickname' } });
    expect(fields(target)).toEqual(['query.mapping.Nick']);
    const type = await importCsv(csv, { types: { nick: 'colour' } });
    expect(fields(type)).toEqual(['query.types.nick']);
    const notJson = await importCsv(csv, { mapping: '{"Nick":' });
    expect(details(notJson)).toEqual([{ field: 'query.mapping', error: 'must be JSON (URL-encoded)' }]);
    expect(await countRows()).toBe(before);
  });

  it('takes mapping and types with CSV only', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/contacts/import?${new URLSearchParams({ mapping: '{}' })}`,
      headers: tenant.live,
      payload: { projectId: tenant.projectId, contacts: [{ externalId: uid() }] },
    });
    expect(res.statusCode).toBe(422);
    expect(fields(res)).toEqual(['query.mapping']);
  });
});
