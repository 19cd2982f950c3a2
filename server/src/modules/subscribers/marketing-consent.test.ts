// Marketing consent through HTTP and a real SMTP peer: a receipt's address is not mailed by campaigns until it is
// subscribed, an unsubscribe link withdraws it, segments filter on it, and migration 0030 backfills existing rows.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DnsServer } from '../../../test/dns-server.js';
import { useSmtpPeer, verifiedDomain } from '../../../test/email-setup.js';
import { createTenant, type Tenant } from '../../../test/fixtures.js';
import { startEmailWorld, type EmailWorld } from '../../../test/email-world.js';
import type { TestApp } from '../../../test/harness.js';
import type { SmtpPeer } from '../../../test/smtp-peer.js';
import { migrationsFolder } from '../../db/database.js';

const DOMAIN = 'shop.example.com';
const PUBLIC_URL = 'https://herald.example.com';

let world: EmailWorld;
let t: TestApp;
let dns: DnsServer;
let peer: SmtpPeer;
let tenant: Tenant;

type Headers = Record<string, string>;
const request = (method: 'GET' | 'POST' | 'PATCH', url: string, headers: Headers, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined && { payload: payload as Record<string, unknown> }) });
const query = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.database.pool.query(text, values)).rows as T[];

beforeAll(async () => {
  world = await startEmailWorld({ domain: DOMAIN, env: { PUBLIC_URL } });
  ({ t, dns, peer } = world);
  tenant = world.tenants[0]!;
});
afterAll(() => world?.close());

let people = 0;
const newAddress = () => `person${++people}-${Date.now()}@example.org`;

/** A password reset to `to`: the kind of mail a customer sends to everyone who has an account. */
async function receipt(to: string): Promise<void> {
  const res = await request('POST', '/transactional/email', tenant.live, {
    to,
    subject: 'Reset your password',
    htmlContent: '<p>Follow this link to reset your password.</p>',
    senderEmail: `accounts@${DOMAIN}`,
  });
  expect(res.json(), res.body).toMatchObject({ status: 'sent' });
  await expect.poll(() => peer.received(to).length, { timeout: 15_000 }).toBe(1);
}

const subscriberOf = async (email: string) =>
  (await query<{ id: string }>('SELECT id FROM subscribers WHERE project_id = $1 AND lower(email) = $2', [tenant.projectId, email]))[0]!.id;
const consentOf = async (id: string) => (await request('GET', `/subscribers/${id}`, tenant.jwt)).json<{ marketingConsent: Record<string, string | null> }>().marketingConsent;

/** An email campaign to everyone in the project, sent now; resolves once it is sent. */
async function campaignToEveryone(subject: string): Promise<void> {
  const res = await request('POST', '/email-campaigns', tenant.jwt, {
    name: subject,
    projectId: tenant.projectId,
    content: { subject, html: '<p>Everything half price.</p>', from: { email: `news@${DOMAIN}`, name: 'Example Shop' } },
    segment: { filters: {} },
    schedule: { mode: 'immediate' },
  });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json<{ id: string }>().id;
  await expect.poll(async () => (await request('GET', `/email-campaigns/${id}`, tenant.jwt)).json<{ status: string }>().status, { timeout: 15_000 }).toBe('sent');
}

const subjectsTo = (address: string) => peer.received(address).map((m) => m.parsed.subject);

const reach = async (filters: Record<string, unknown>, channel?: string) => {
  const res = await request('POST', '/segments/reach', tenant.live, { projectId: tenant.projectId, filters, ...(channel && { channel }) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ count: number }>().count;
};

describe('marketing consent of email addresses', () => {
  it('keeps a receipt’s address out of campaigns until it is subscribed, and out again once it unsubscribes by the link', async () => {
    const customer = newAddress();
    const reader = newAddress();
    await receipt(customer);
    const readerRes = await request('POST', '/contacts', tenant.live, { projectId: tenant.projectId, email: reader });
    expect(readerRes.json(), readerRes.body).toMatchObject({ marketingConsent: { push: null, email: 'subscribed', sms: null, whatsapp: null } });
    const customerId = await subscriberOf(customer);
    expect(await consentOf(customerId)).toEqual({ push: null, email: 'transactional', sms: null, whatsapp: null });
    expect(await reach({}, 'email')).toBe(1);
    expect(await reach({ emailConsent: 'transactional' })).toBe(1);

    await campaignToEveryone('Spring sale');
    expect(subjectsTo(reader)).toEqual(['Spring sale']);
    expect(subjectsTo(customer)).toEqual(['Reset your password']);

    // The person subscribes (the customer's sign-up form calls the API): the next campaign reaches them.
    const subscribed = await request('PATCH', `/subscribers/${customerId}`, tenant.live, { marketingConsent: { email: 'subscribed' } });
    expect(subscribed.json(), subscribed.body).toMatchObject({ marketingConsent: { email: 'subscribed' } });
    // Reach is cached 30 s per filters: other filters, to the same people.
    expect(await reach({ lastSeenDays: 30 }, 'email')).toBe(2);
    await campaignToEveryone('Summer sale');
    expect(subjectsTo(customer)).toEqual(['Reset your password', 'Summer sale']);

    // Unsubscribed by the link in that campaign's footer: campaigns stop, receipts still go (as before).
    const summer = peer.received(customer)[1]!;
    const link = /href="(https:\/\/herald\.example\.com\/u\/[^"]+)"/.exec(summer.parsed.html as string)![1]!.replace(/&amp;/g, '&');
    const unsubscribed = await t.app.inject({
      method: 'POST',
      url: link.slice(PUBLIC_URL.length),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    expect(unsubscribed.statusCode).toBe(200);
    expect(await consentOf(customerId)).toMatchObject({ email: 'unsubscribed' });
    expect(await reach({ emailConsent: ['unsubscribed'] })).toBe(1);
    await campaignToEveryone('Autumn sale');
    expect(subjectsTo(customer)).toEqual(['Reset your password', 'Summer sale']);
    expect(subjectsTo(reader)).toEqual(['Spring sale', 'Summer sale', 'Autumn sale']);
  });

  it('lists each subscriber with its consent, and refuses a consent for an address the request does not give (422)', async () => {
    const address = newAddress();
    await receipt(address);
    const list = await request('GET', `/subscribers/project/${tenant.projectId}?email=${encodeURIComponent(address)}`, tenant.jwt);
    expect(list.json<{ data: unknown[] }>().data).toEqual([expect.objectContaining({ email: address, marketingConsent: { push: null, email: 'transactional', sms: null, whatsapp: null } })]);

    const noEmail = await request('POST', '/contacts', tenant.live, { projectId: tenant.projectId, externalId: 'u-1', marketingConsent: { email: 'subscribed' } });
    expect(noEmail.statusCode).toBe(422);
    expect(noEmail.json()).toMatchObject({ code: 'validation_failed', details: [{ field: 'marketingConsent.email' }] });
    const id = (await request('POST', '/contacts', tenant.live, { projectId: tenant.projectId, externalId: 'u-2' })).json<{ id: string }>().id;
    const noPhone = await request('PATCH', `/subscribers/${id}`, tenant.live, { marketingConsent: { sms: 'subscribed' } });
    expect(noPhone.statusCode).toBe(422);
    expect(noPhone.json()).toMatchObject({ details: [{ field: 'marketingConsent.sms', error: 'the subscriber has no phone number' }] });
    expect((await request('PATCH', `/subscribers/${id}`, tenant.live, { marketingConsent: { email: 'maybe' } })).statusCode).toBe(422);
  });

  it('keeps a receipt’s address transactional when a manual suppression of it is lifted', async () => {
    const address = newAddress();
    await receipt(address);
    const suppressions = `/projects/${tenant.projectId}/suppressions`;
    expect((await request('POST', suppressions, tenant.jwt, { email: address, reason: 'manual' })).statusCode).toBeLessThan(300);
    expect((await t.app.inject({ method: 'DELETE', url: `${suppressions}/${encodeURIComponent(address)}`, headers: tenant.jwt })).statusCode).toBeLessThan(300);
    expect(await consentOf(await subscriberOf(address))).toMatchObject({ email: 'transactional' });
  });

  it('takes a consent per row from an import, JSON or CSV', async () => {
    const [a, b] = [newAddress(), newAddress()];
    await receipt(a);
    const csv = `email,marketingConsent.email\n${a},subscribed\n${b},unsubscribed\n`;
    const res = await t.app.inject({
      method: 'POST',
      url: `/contacts/import?projectId=${tenant.projectId}&upsertBy=email`,
      headers: { ...tenant.live, 'content-type': 'text/csv' },
      payload: csv,
    });
    expect(res.json(), res.body).toMatchObject({ created: 1, updated: 1 });
    expect(await consentOf(await subscriberOf(a))).toMatchObject({ email: 'subscribed' });
    expect(await consentOf(await subscriberOf(b))).toMatchObject({ email: 'unsubscribed' });
  });
});

describe('migration 0030 on a populated database', () => {
  it('makes the addresses of contacts a transactional send created `transactional`, opted-out ones `unsubscribed`, and leaves the rest subscribed', async () => {
    const who = await createTenant(t);
    await useSmtpPeer(t, who, peer);
    await verifiedDomain(t, dns, who, 'mail.example.net');
    const send = async (to: string) => {
      const res = await request('POST', '/transactional/email', who.live, { to, subject: 'Receipt', htmlContent: '<p>Thanks</p>', senderEmail: `orders@mail.example.net` });
      expect(res.json(), res.body).toMatchObject({ status: 'sent' });
    };
    const [bought, known, member, left] = [newAddress(), newAddress(), newAddress(), newAddress()];
    await send(bought);
    // A contact of the project's own that later got a receipt stays subscribed.
    expect((await request('POST', '/contacts', who.live, { projectId: who.projectId, email: known, externalId: 'k-1' })).statusCode).toBe(201);
    await send(known);
    expect((await request('POST', '/contacts', who.live, { projectId: who.projectId, email: member })).statusCode).toBe(201);
    expect((await request('POST', '/contacts', who.live, { projectId: who.projectId, email: left })).statusCode).toBe(201);
    await request('POST', `/projects/${who.projectId}/suppressions`, who.jwt, { email: left, reason: 'unsubscribed' });

    // As the rows were before the migration: no consent said anywhere.
    await query(`DELETE FROM channel_addresses WHERE project_id = $1 AND status = 'reachable'`, [who.projectId]);
    await query(`UPDATE channel_addresses SET consent = 'subscribed', consent_source = NULL, consent_at = NULL WHERE project_id = $1`, [who.projectId]);
    const file = (await readdir(migrationsFolder)).find((name) => name.endsWith('_marketing_consent.sql'))!;
    const statements = (await readFile(path.join(migrationsFolder, file), 'utf8')).split('--> statement-breakpoint');
    for (const statement of statements.filter((s) => !/^\s*(CREATE TYPE|ALTER TABLE)/.test(s))) await query(statement);

    const consents = await query<{ email: string; consent: string | null }>(
      `SELECT s.email, a.consent FROM subscribers s LEFT JOIN channel_addresses a ON a.project_id = s.project_id AND a.channel = 'email' AND a.address = lower(s.email)
       WHERE s.project_id = $1 ORDER BY s.email`,
      [who.projectId],
    );
    expect(Object.fromEntries(consents.map((r) => [r.email, r.consent ?? 'subscribed (no row)']))).toEqual({
      [bought]: 'transactional',
      [known]: 'subscribed (no row)',
      [member]: 'subscribed (no row)',
      [left]: 'unsubscribed',
    });
  });
});
