// Dates and instants outside years 0001–9999 (UTC) are a 422 naming the field, never a failed query and a 500.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../test/harness.js';
import { createLogger } from '../logger.js';

const lines: string[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  },
});

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  t = await startTestApp({}, { logger: createLogger('info', logStream) });
  tenant = await createTenant(t);
});
afterAll(() => t.close());

type Case = [label: string, method: 'GET' | 'POST', url: () => string, payload: (() => Record<string, unknown>) | undefined, field: string];

const campaign = (schedule: Record<string, unknown>) => () => ({
  name: 'C',
  projectId: tenant.projectId,
  content: { title: 'T', body: 'B' },
  segment: { filters: {} },
  schedule,
});
const reach = (subscriptionDate: Record<string, unknown>) => () => ({ projectId: tenant.projectId, filters: { subscriptionDate } });

const OUT_OF_RANGE = ['0000-01-01', '0000-06-15T12:00:00Z', '0001-01-01T00:00:00+01:00', '+010000-01-01T00:00:00Z'];

const cases = (value: string): Case[] => {
  const q = encodeURIComponent(value);
  const rows: Case[] = [
    ['GET /campaigns from', 'GET', () => `/campaigns/project/${tenant.projectId}?from=${q}`, undefined, 'query.from'],
    ['GET /campaigns to', 'GET', () => `/campaigns/project/${tenant.projectId}?to=${q}`, undefined, 'query.to'],
    ['GET /transactional/sends from', 'GET', () => `/transactional/sends/project/${tenant.projectId}?from=${q}`, undefined, 'query.from'],
    ['GET /transactional/sends to', 'GET', () => `/transactional/sends/project/${tenant.projectId}?to=${q}`, undefined, 'query.to'],
    ['GET /subscribers createdAfter', 'GET', () => `/subscribers/project/${tenant.projectId}?createdAfter=${q}`, undefined, 'query.createdAfter'],
    ['GET /subscribers createdBefore', 'GET', () => `/subscribers/project/${tenant.projectId}?createdBefore=${q}`, undefined, 'query.createdBefore'],
    ['POST /segments/reach subscriptionDate.from', 'POST', () => '/segments/reach', reach({ from: value }), 'filters.subscriptionDate.from'],
    ['POST /segments/reach subscriptionDate.to', 'POST', () => '/segments/reach', reach({ to: value }), 'filters.subscriptionDate.to'],
  ];
  if (value.includes('T')) {
    rows.push(['POST /campaigns draft sendAt', 'POST', () => '/campaigns', campaign({ mode: 'draft', sendAt: value }), 'schedule.sendAt']);
    rows.push(['POST /campaigns scheduled sendAt', 'POST', () => '/campaigns', campaign({ mode: 'scheduled', sendAt: value }), 'schedule.sendAt']);
  } else {
    rows.push(['GET campaign export from', 'GET', () => `/campaigns/export/project/${tenant.projectId}.csv?from=${q}`, undefined, 'query.from']);
  }
  return rows;
};

describe.each(OUT_OF_RANGE)('%s', (value) => {
  it.each(cases(value))('%s → 422 naming the field', async (_label, method, url, payload, field) => {
    const res = await t.app.inject({ method, url: url(), headers: tenant.jwt, ...(payload && { payload: payload() }) });
    expect(res.statusCode, res.body).toBe(422);
    // A year of five digits is not ISO 8601 at all; the others are refused for their range.
    const error = value.startsWith('+') ? expect.any(String) : expect.stringMatching(/0001-01-01 and 9999-12-31/);
    expect(res.json().details).toEqual([{ field, error }]);
  });
});

describe('a wall-clock sendAt whose zone takes it out of the range', () => {
  it('is a 422 naming schedule.sendAt', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/campaigns',
      headers: tenant.jwt,
      payload: campaign({ mode: 'draft', sendAt: '0001-01-01T00:00:00', timezone: 'Asia/Tokyo' })(),
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().details).toEqual([{ field: 'schedule.sendAt', error: 'must be between 0001-01-01 and 9999-12-31 (UTC)' }]);
  });
});

describe('the bounds themselves', () => {
  it('accepts the first and last day of the range', async () => {
    for (const [from, to] of [
      ['0001-01-01', '9999-12-31'],
      ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z'],
    ]) {
      const query = `from=${encodeURIComponent(from!)}&to=${encodeURIComponent(to!)}`;
      for (const url of [`/campaigns/project/${tenant.projectId}?${query}`, `/transactional/sends/project/${tenant.projectId}?${query}`]) {
        const res = await t.app.inject({ method: 'GET', url, headers: tenant.jwt });
        expect(res.statusCode, `${url} ${res.body}`).toBe(200);
      }
      const subscribers = await t.app.inject({
        method: 'GET',
        url: `/subscribers/project/${tenant.projectId}?createdAfter=${encodeURIComponent(from!)}&createdBefore=${encodeURIComponent(to!)}`,
        headers: tenant.jwt,
      });
      expect(subscribers.statusCode, subscribers.body).toBe(200);
      const segment = await t.app.inject({ method: 'POST', url: '/segments/reach', headers: tenant.jwt, payload: reach({ from, to })() });
      expect(segment.statusCode, segment.body).toBe(200);
    }
    const draft = await t.app.inject({ method: 'POST', url: '/campaigns', headers: tenant.jwt, payload: campaign({ mode: 'draft', sendAt: '9999-12-31T23:59:59Z' })() });
    expect(draft.statusCode, draft.body).toBe(201);
  });
});
