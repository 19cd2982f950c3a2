// Sending domains through HTTP against a local DNS server: records shown, keys sealed, verification and its re-check,
// the domain a sender may use, keys that sign mail a real DKIM verifier accepts, and tenancy.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { parseCronItems } from 'graphile-worker';
import { dkimSign, dkimVerify } from 'mailauth';
import nodemailer from 'nodemailer';
import type { Notification } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../../test/dns-server.js';
import { addMember, createTenant, publishableKey, type Tenant } from '../../../test/fixtures.js';
import { startTestApp, type TestApp } from '../../../test/harness.js';
import { createTaskList, cronItems } from '../../app/task-list.js';
import { createLogger } from '../../logger.js';
import { createSecretBox } from '../../shared/secret-box.js';
import { randomToken } from '../../shared/secrets.js';
import { createKeyring } from '../channels/index.js';
import { findDomain } from './email-domain.repository.js';
import { RECHECK_TASK, resealPrivateKeys, type EmailDomain } from './email-domain.service.js';

const SECRET_KEY = 'k'.repeat(40);

let t: TestApp;
let dns: DnsServer;
let owner: Tenant;
const logLines: string[] = [];
/** Every API answer of this file: none may carry a private key. */
const answered: string[] = [];

beforeAll(async () => {
  dns = await startDnsServer();
  t = await startTestApp(
    { DNS_SERVERS: dns.address, EMAIL_SPF_INCLUDE: '_spf.herald.example.net', HERALD_SECRET_KEY: SECRET_KEY },
    { logger: createLogger('info', { write: (line: string) => void logLines.push(line) }) },
  );
  owner = await createTenant(t);
});
afterAll(async () => {
  await t?.close();
  await dns?.close();
});

type Headers = Record<string, string>;

async function call(method: 'GET' | 'POST' | 'DELETE', url: string, headers: Headers, payload?: Record<string, unknown>) {
  const res = await t.app.inject({ method, url, headers, ...(payload && { payload }) });
  answered.push(res.body);
  return res;
}

const base = (projectId = owner.projectId) => `/projects/${projectId}/email-domains`;
const uniqueDomain = () => `d${randomToken(8)}.example.com`;

async function add(domain: string, options: { ed25519?: boolean; headers?: Headers; projectId?: string } = {}): Promise<EmailDomain> {
  const res = await call('POST', base(options.projectId), options.headers ?? owner.jwt, {
    domain,
    ...(options.ed25519 !== undefined && { ed25519: options.ed25519 }),
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<EmailDomain>();
}

async function verify(domain: EmailDomain, headers: Headers = owner.jwt): Promise<EmailDomain> {
  const res = await call('POST', `${base(domain.projectId)}/${domain.id}/verify`, headers);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<EmailDomain>();
}

const record = (domain: EmailDomain, purpose: string) => domain.records.find((r) => r.purpose === purpose)!;

/** Publishes the records verification checks (RSA values exceed 255 bytes: the server splits them in two strings). */
function publish(domain: EmailDomain, except: string[] = []) {
  for (const r of domain.records) if (r.checked && !except.includes(r.purpose)) dns.setTxt(r.name, r.value);
}

const rawRow = async (id: string) =>
  (await t.database.pool.query<{ private_keys: string; status: string }>('SELECT private_keys, status FROM email_domains WHERE id = $1', [id])).rows[0];

const openKeys = (sealed: string) => JSON.parse(createSecretBox(SECRET_KEY).open(sealed)) as { rsa: string; ed25519?: string };

const runRecheck = async () => {
  const warnings: string[] = [];
  await createTaskList(t.services)[RECHECK_TASK]!({}, { logger: { warn: (message: string) => void warnings.push(message) } } as never);
  return warnings;
};

describe('POST /projects/:projectId/email-domains', () => {
  it('answers the records to publish: DKIM (RSA 2048), ownership, and the recommended SPF and DMARC', async () => {
    const domain = await add('Example.COM');
    expect(domain).toMatchObject({ id: expect.stringMatching(/^dom_/), projectId: owner.projectId, domain: 'example.com', status: 'pending' });
    expect(domain).toMatchObject({ problems: [], verifiedAt: null, lastCheckedAt: null });
    const dkim = record(domain, 'dkim');
    expect(dkim).toEqual({
      type: 'TXT',
      name: expect.stringMatching(/^herald-[0-9a-z]{8}\._domainkey\.example\.com$/),
      value: expect.stringMatching(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/),
      purpose: 'dkim',
      checked: true,
    });
    const publicKey = createPublicKey({ key: Buffer.from(dkim.value.split('p=')[1]!, 'base64'), format: 'der', type: 'spki' });
    expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(record(domain, 'ownership')).toEqual({
      type: 'TXT',
      name: '_herald.example.com',
      value: expect.stringMatching(/^herald-verification=[0-9a-z]{32}$/),
      purpose: 'ownership',
      checked: true,
    });
    expect(record(domain, 'spf')).toEqual({ type: 'TXT', name: 'example.com', value: 'v=spf1 include:_spf.herald.example.net ~all', purpose: 'spf', checked: false });
    expect(record(domain, 'dmarc')).toEqual({ type: 'TXT', name: '_dmarc.example.com', value: 'v=DMARC1; p=none;', purpose: 'dmarc', checked: false });
    expect(domain.records.some((r) => r.purpose === 'dkim_ed25519')).toBe(false);

    // The private key is sealed in its row, and it is the published key's other half.
    const raw = (await rawRow(domain.id))!;
    expect(raw.private_keys).toMatch(/^hsb1\.[\w-]{8}\.[\w-]+\.[\w-]+$/);
    expect(raw.private_keys).not.toContain('PRIVATE KEY');
    const keys = openKeys(raw.private_keys);
    expect(keys.ed25519).toBeUndefined();
    expect(createPublicKey(keys.rsa).export({ format: 'der', type: 'spki' }).toString('base64')).toBe(dkim.value.split('p=')[1]);
  });

  it('adds an Ed25519 key on request: its record carries the raw 32-byte key', async () => {
    const domain = await add(uniqueDomain(), { ed25519: true });
    const ed = record(domain, 'dkim_ed25519');
    expect(ed.name).toBe(`${record(domain, 'dkim').name.split('.')[0]}-ed25519._domainkey.${domain.domain}`);
    const p = ed.value.match(/^v=DKIM1; k=ed25519; p=(.+)$/)![1]!;
    expect(Buffer.from(p, 'base64')).toHaveLength(32);
    const keys = openKeys((await rawRow(domain.id))!.private_keys);
    expect(createPublicKey(keys.ed25519!).export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64')).toBe(p);
  });

  it('recommends `a mx` as SPF when no EMAIL_SPF_INCLUDE is configured', async () => {
    const plain = await startTestApp({ DNS_SERVERS: dns.address });
    try {
      const tenant = await createTenant(plain);
      const res = await plain.app.inject({ method: 'POST', url: base(tenant.projectId), headers: tenant.jwt, payload: { domain: 'example.org' } });
      expect(res.json<EmailDomain>().records.find((r) => r.purpose === 'spf')).toMatchObject({ value: 'v=spf1 a mx ~all', checked: false });
    } finally {
      await plain.close();
    }
  });

  it('refuses a domain the project already has (409), whatever its case; another project may add it with its own selector', async () => {
    const first = await add(uniqueDomain());
    const again = await call('POST', base(), owner.jwt, { domain: first.domain.toUpperCase() });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'email_domain_exists' });
    const other = await createTenant(t);
    const theirs = await add(first.domain, { headers: other.jwt, projectId: other.projectId });
    expect(record(theirs, 'dkim').name).not.toBe(record(first, 'dkim').name);
  });

  it.each([['not a domain'], ['example'], ['-bad.example.com'], ['exa_mple.com'], ['a..example.com']])('refuses %j with 422 naming domain', async (domain) => {
    const res = await call('POST', base(), owner.jwt, { domain });
    expect(res.statusCode).toBe(422);
    expect(res.json().details).toEqual([{ field: 'domain', error: expect.any(String) }]);
  });

  it('422 names an unknown field and a non-boolean ed25519', async () => {
    const res = await call('POST', base(), owner.jwt, { domain: uniqueDomain(), ed25519: 'yes', dkim: 'mine' });
    expect(res.statusCode).toBe(422);
    expect(res.json<{ details: { field: string }[] }>().details.map((d) => d.field).sort()).toEqual(['dkim', 'ed25519']);
  });
});

describe('verification', () => {
  it('verifies a domain whose ownership and DKIM records are published', async () => {
    const domain = await add(uniqueDomain());
    publish(domain);
    const verified = await verify(domain);
    expect(verified).toMatchObject({ status: 'verified', problems: [], verifiedAt: expect.any(String), lastCheckedAt: expect.any(String) });
    const read = await call('GET', `${base()}/${domain.id}`, owner.live);
    expect(read.json()).toMatchObject({ status: 'verified', verifiedAt: verified.verifiedAt });
  });

  it('verifies both DKIM keys of an Ed25519 domain, and not without the second record', async () => {
    const domain = await add(uniqueDomain(), { ed25519: true });
    publish(domain, ['dkim_ed25519']);
    expect(await verify(domain)).toMatchObject({
      status: 'pending',
      problems: [{ record: 'dkim_ed25519', name: record(domain, 'dkim_ed25519').name, problem: 'missing' }],
    });
    publish(domain);
    expect(await verify(domain)).toMatchObject({ status: 'verified', problems: [] });
  });

  it('keeps a domain without its ownership record pending, naming the record', async () => {
    const domain = await add(uniqueDomain());
    publish(domain, ['ownership']);
    const checked = await verify(domain);
    expect(checked).toMatchObject({ status: 'pending', verifiedAt: null, lastCheckedAt: expect.any(String) });
    expect(checked.problems).toEqual([{ record: 'ownership', name: `_herald.${domain.domain}`, problem: 'missing' }]);
  });

  it('does not verify a DKIM record with another key, nor an ownership record with another token', async () => {
    const domain = await add(uniqueDomain());
    publish(domain);
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    dns.setTxt(record(domain, 'dkim').name, `v=DKIM1; k=rsa; p=${otherKey}`);
    dns.setTxt(record(domain, 'ownership').name, 'herald-verification=someone-else', 'google-site-verification=abc');
    const checked = await verify(domain);
    expect(checked.status).toBe('pending');
    expect(checked.problems).toEqual([
      { record: 'dkim', name: record(domain, 'dkim').name, problem: 'wrong_value' },
      { record: 'ownership', name: record(domain, 'ownership').name, problem: 'wrong_value' },
    ]);
  });

  it('reads the DKIM record as RFC 6376 tags: spaces inside the key and another tag order still match; another key type does not', async () => {
    const domain = await add(uniqueDomain());
    publish(domain);
    const key = record(domain, 'dkim').value.split('p=')[1]!;
    dns.setTxt(record(domain, 'dkim').name, `p=${key.slice(0, 100)} ${key.slice(100)} ; k=rsa;v=DKIM1`);
    expect((await verify(domain)).status).toBe('verified');
    dns.setTxt(record(domain, 'dkim').name, `v=DKIM1; k=ed25519; p=${key}`);
    expect((await verify(domain)).problems).toEqual([{ record: 'dkim', name: record(domain, 'dkim').name, problem: 'wrong_value' }]);
  });

  it('announces a change of status like a settings change, so caches of sending settings drop it', async () => {
    const domain = await add(uniqueDomain());
    publish(domain);
    const client = await t.database.pool.connect();
    const heard: Notification[] = [];
    try {
      client.on('notification', (message) => heard.push(message));
      await client.query('LISTEN herald_project_changes');
      await verify(domain);
      await verify(domain); // still verified: nothing to announce
      await client.query('SELECT 1');
      expect(heard.map((n) => JSON.parse(n.payload!))).toEqual([{ projectId: owner.projectId }]);
    } finally {
      await client.query('UNLISTEN *');
      client.release();
    }
  });
});

describe('the hourly re-check', () => {
  it('is a cron item of the worker, every hour', () => {
    expect(cronItems).toContainEqual(expect.objectContaining({ task: RECHECK_TASK, match: '0 * * * *' }));
    expect(parseCronItems(cronItems).map((item) => item.task)).toContain(RECHECK_TASK);
    expect(createTaskList(t.services)[RECHECK_TASK]).toBeTypeOf('function');
  });

  it('flags a verified domain that lost its records as failing, and verifies it again once they are back', async () => {
    const domain = await add(uniqueDomain());
    publish(domain);
    const verified = await verify(domain);
    const sender = `news@${domain.domain}`;
    expect(await t.services.emailDomains.verifiedDomainFor(owner.projectId, sender)).toMatchObject({ id: domain.id });

    dns.remove(record(domain, 'dkim').name);
    const warnings = await runRecheck();
    expect(warnings).toEqual([expect.stringContaining(`sending domain ${domain.domain} of project ${owner.projectId} lost its DNS records`)]);
    const failing = (await call('GET', `${base()}/${domain.id}`, owner.jwt)).json<EmailDomain>();
    expect(failing).toMatchObject({ status: 'failing', verifiedAt: verified.verifiedAt });
    expect(failing.problems).toEqual([{ record: 'dkim', name: record(domain, 'dkim').name, problem: 'missing' }]);
    expect(new Date(failing.lastCheckedAt!).getTime()).toBeGreaterThan(new Date(verified.lastCheckedAt!).getTime());
    // Only verified sends.
    expect(await t.services.emailDomains.verifiedDomainFor(owner.projectId, sender)).toBeUndefined();
    expect(await t.services.emailDomains.signingKeys(owner.projectId, domain.domain)).toBeUndefined();
    // Flagged once: still failing is not news.
    expect(await runRecheck()).toEqual([]);

    publish(domain);
    await runRecheck();
    const back = (await call('GET', `${base()}/${domain.id}`, owner.jwt)).json<EmailDomain>();
    expect(back).toMatchObject({ status: 'verified', problems: [] });
    expect(new Date(back.verifiedAt!).getTime()).toBeGreaterThan(new Date(verified.verifiedAt!).getTime());
    expect(await t.services.emailDomains.verifiedDomainFor(owner.projectId, sender)).toMatchObject({ id: domain.id });
  });

  it('changes no status when DNS gives no answer, and names the lookups that failed', async () => {
    const verifiedDomain = await add(uniqueDomain());
    publish(verifiedDomain);
    await verify(verifiedDomain);
    const pendingDomain = await add(uniqueDomain());
    publish(pendingDomain);
    dns.failing(true);
    try {
      await runRecheck();
      const stillVerified = (await call('GET', `${base()}/${verifiedDomain.id}`, owner.jwt)).json<EmailDomain>();
      expect(stillVerified.status).toBe('verified');
      expect(stillVerified.problems.map((p) => p.problem)).toEqual(['lookup_failed', 'lookup_failed']);
      const stillPending = await verify(pendingDomain);
      expect(stillPending.status).toBe('pending');
      expect(stillPending.problems.map((p) => [p.record, p.problem])).toEqual([
        ['dkim', 'lookup_failed'],
        ['ownership', 'lookup_failed'],
      ]);
    } finally {
      dns.failing(false);
    }
  });

  it('leaves pending domains to verify', async () => {
    const domain = await add(uniqueDomain());
    publish(domain);
    await runRecheck();
    expect((await rawRow(domain.id))!.status).toBe('pending');
  });
});

describe('what the sending path asks', () => {
  let tenant: Tenant;
  let root: EmailDomain;

  beforeAll(async () => {
    tenant = await createTenant(t);
    root = await add('example.com', { ed25519: true, headers: tenant.jwt, projectId: tenant.projectId });
    publish(root);
    await verify(root, tenant.jwt);
  });

  it('verifiedDomainFor covers the verified domain and its subdomains, not look-alikes', async () => {
    const coveredBy = async (address: string) => (await t.services.emailDomains.verifiedDomainFor(tenant.projectId, address))?.domain;
    expect(await coveredBy('news@example.com')).toBe('example.com');
    expect(await coveredBy('News@Mail.EXAMPLE.com')).toBe('example.com');
    expect(await coveredBy('a@deep.mail.example.com.')).toBe('example.com');
    for (const address of ['a@badexample.com', 'a@example.com.evil.net', 'a@com', 'example.com', 'a@example.co', 'a@xexample.com']) {
      expect(await coveredBy(address), address).toBeUndefined();
    }
    // Another project's verified domain covers nothing here.
    expect(await t.services.emailDomains.verifiedDomainFor(owner.projectId, 'news@example.com')).toBeUndefined();
  });

  it('verifiedDomainFor answers the most specific verified domain, and ignores a pending subdomain', async () => {
    const mail = await add('mail.example.com', { headers: tenant.jwt, projectId: tenant.projectId });
    expect((await t.services.emailDomains.verifiedDomainFor(tenant.projectId, 'a@mail.example.com'))?.domain).toBe('example.com');
    publish(mail);
    await verify(mail, tenant.jwt);
    expect((await t.services.emailDomains.verifiedDomainFor(tenant.projectId, 'a@mail.example.com'))?.id).toBe(mail.id);
    expect((await t.services.emailDomains.verifiedDomainFor(tenant.projectId, 'a@other.example.com'))?.id).toBe(root.id);
  });

  it('signingKeys sign mail (nodemailer RSA, and Ed25519) that a DKIM verifier accepts against the published records', async () => {
    const keys = (await t.services.emailDomains.signingKeys(tenant.projectId, 'EXAMPLE.com'))!;
    expect(keys).toMatchObject({ domainName: 'example.com', selector: record(root, 'dkim').name.split('.')[0] });
    expect(keys.ed25519).toMatchObject({ selector: record(root, 'dkim_ed25519').name.split('.')[0] });
    expect(await t.services.emailDomains.signingKeys(tenant.projectId, 'mail.example.org')).toBeUndefined();

    const transport = nodemailer.createTransport({
      streamTransport: true,
      buffer: true,
      dkim: { domainName: keys.domainName, keySelector: keys.selector, privateKey: keys.privateKey },
    });
    const sent = await transport.sendMail({ from: 'news@mail.example.com', to: 'someone@example.org', subject: 'Signed', text: 'Hello' });
    const rsaSigned = sent.message as Buffer;
    // nodemailer signs with RSA only: the second signature is mailauth's (it reads signatureData; its types want both).
    const ed25519 = { signingDomain: keys.domainName, selector: keys.ed25519!.selector, privateKey: keys.ed25519!.privateKey, algorithm: 'ed25519-sha256' };
    const { signatures, errors } = await dkimSign(rsaSigned, { ...ed25519, signatureData: [ed25519] });
    expect(errors).toEqual([]);
    const resolver = new Resolver();
    resolver.setServers([dns.address]);
    const result = await dkimVerify(Buffer.concat([Buffer.from(signatures), rsaSigned]), { resolver: (name) => resolver.resolveTxt(name) });
    expect(result.results.map((r) => [r.signingDomain, r.status.header?.a, r.status.result]).sort()).toEqual([
      ['example.com', 'ed25519-sha256', 'pass'],
      ['example.com', 'rsa-sha256', 'pass'],
    ]);
  });

  it('keeps private keys out of the logs, row and opened keys alike', async () => {
    const keys = (await t.services.emailDomains.signingKeys(tenant.projectId, 'example.com'))!;
    const row = (await findDomain(t.database.db, tenant.projectId, root.id))!;
    // As logged by whoever holds them: the row, the keys, nodemailer's `dkim` option.
    t.app.log.info({ row, keys, dkim: { ...keys, keySelector: keys.selector } }, 'signing');
    const text = logLines.join('\n');
    expect(text).toContain('signing');
    expect(text).not.toContain(row.privateKeys);
    for (const pem of [keys.privateKey, keys.ed25519!.privateKey]) expect(text).not.toContain(pem.split('\n')[1]);
    expect(text).not.toContain('PRIVATE KEY');
  });
});

describe('GET, DELETE and access', () => {
  it('lists the project\'s domains by name, to a live key and a member', async () => {
    const tenant = await createTenant(t);
    const [b, a] = [await add('b.example.com', { headers: tenant.jwt, projectId: tenant.projectId }), await add('a.example.com', { headers: tenant.live, projectId: tenant.projectId })];
    for (const headers of [tenant.jwt, tenant.live, tenant.test]) {
      const res = await call('GET', base(tenant.projectId), headers);
      expect(res.statusCode).toBe(200);
      expect(res.json<{ data: EmailDomain[] }>().data.map((d) => d.id)).toEqual([a.id, b.id]);
    }
  });

  it('deletes a domain (ADMIN): its keys go with it and it no longer covers any sender', async () => {
    const domain = await add(uniqueDomain());
    publish(domain);
    await verify(domain);
    const res = await call('DELETE', `${base()}/${domain.id}`, owner.jwt);
    expect(res.statusCode).toBe(204);
    expect(await rawRow(domain.id)).toBeUndefined();
    expect((await call('GET', `${base()}/${domain.id}`, owner.jwt)).statusCode).toBe(404);
    expect((await call('DELETE', `${base()}/${domain.id}`, owner.jwt)).statusCode).toBe(404);
    expect(await t.services.emailDomains.verifiedDomainFor(owner.projectId, `a@${domain.domain}`)).toBeUndefined();
  });

  it('keeps tenants apart: another project\'s key → 403, another organization\'s user → 404, an unknown or foreign id → 404', async () => {
    const domain = await add(uniqueDomain());
    const other = await createTenant(t);
    for (const [method, url] of [
      ['GET', base()],
      ['POST', base()],
      ['GET', `${base()}/${domain.id}`],
      ['POST', `${base()}/${domain.id}/verify`],
      ['DELETE', `${base()}/${domain.id}`],
    ] as const) {
      const payload = url === base() && method === 'POST' ? { domain: uniqueDomain() } : undefined;
      const byKey = await call(method, url, other.live, payload);
      expect(byKey.statusCode, `${method} ${url}`).toBe(403);
      expect(byKey.json()).toMatchObject({ code: 'cross_project' });
      const byUser = await call(method, url, other.jwt, payload);
      expect(byUser.statusCode, `${method} ${url}`).toBe(404);
      expect(byUser.json()).toMatchObject({ message: 'Project not found' });
    }
    // The domain's id under the other project's own path: not found there.
    for (const [method, suffix] of [['GET', ''], ['POST', '/verify'], ['DELETE', '']] as const) {
      expect((await call(method, `${base(other.projectId)}/${domain.id}${suffix}`, other.live)).statusCode).toBe(404);
    }
    expect((await call('GET', `${base()}/dom_unknown`, owner.jwt)).json()).toMatchObject({ statusCode: 404, message: 'Email domain not found' });
    expect((await rawRow(domain.id))!.status).toBe('pending');
  });

  it('needs ADMIN to add or delete: VIEWER and MEMBER → 403; a MEMBER may verify, a VIEWER only read', async () => {
    const domain = await add(uniqueDomain());
    const viewer = await addMember(t, owner, 'VIEWER');
    const member = await addMember(t, owner, 'MEMBER');
    const admin = await addMember(t, owner, 'ADMIN');
    for (const headers of [viewer.headers, member.headers]) {
      expect((await call('POST', base(), headers, { domain: uniqueDomain() })).statusCode).toBe(403);
      expect((await call('DELETE', `${base()}/${domain.id}`, headers)).statusCode).toBe(403);
    }
    expect((await call('GET', `${base()}/${domain.id}`, viewer.headers)).statusCode).toBe(200);
    expect((await call('POST', `${base()}/${domain.id}/verify`, viewer.headers)).statusCode).toBe(403);
    expect((await call('POST', `${base()}/${domain.id}/verify`, member.headers)).statusCode).toBe(200);
    await add(uniqueDomain(), { headers: admin.headers });
    expect((await call('DELETE', `${base()}/${domain.id}`, admin.headers)).statusCode).toBe(204);
  });

  it('refuses a publishable key everywhere, and a test key adding or deleting (it may read and verify)', async () => {
    const domain = await add(uniqueDomain());
    const browser = await publishableKey(t, owner);
    for (const [method, url] of [
      ['GET', base()],
      ['POST', base()],
      ['GET', `${base()}/${domain.id}`],
      ['POST', `${base()}/${domain.id}/verify`],
      ['DELETE', `${base()}/${domain.id}`],
    ] as const) {
      const res = await call(method, url, browser, method === 'POST' && url === base() ? { domain: uniqueDomain() } : undefined);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ code: 'publishable_key_forbidden' });
    }
    const added = await call('POST', base(), owner.test, { domain: uniqueDomain() });
    expect(added.statusCode).toBe(403);
    expect(added.json()).toMatchObject({ code: 'test_key_forbidden' });
    expect((await call('DELETE', `${base()}/${domain.id}`, owner.test)).json()).toMatchObject({ statusCode: 403, code: 'test_key_forbidden' });
    expect((await call('POST', `${base()}/${domain.id}/verify`, owner.test)).statusCode).toBe(200);
    expect((await add(uniqueDomain(), { headers: owner.live })).status).toBe('pending');
  });
});

describe('sealing', () => {
  it('never answers a private key', async () => {
    const keys = (await t.database.pool.query<{ private_keys: string }>('SELECT private_keys FROM email_domains')).rows.map((r) => r.private_keys);
    expect(keys.length).toBeGreaterThan(5);
    const bodies = answered.join('\n');
    expect(answered.length).toBeGreaterThan(20);
    for (const sealed of keys) {
      expect(bodies).not.toContain(sealed);
      const opened = openKeys(sealed);
      for (const pem of [opened.rsa, opened.ed25519].filter((k) => k !== undefined)) {
        expect(bodies).not.toContain(pem.split('\n')[1]);
      }
    }
    expect(bodies).not.toMatch(/PRIVATE KEY|privateKey/);
  });

  it('rotate-secret-key reseals the DKIM keys under the new key', async () => {
    const domain = await add(uniqueDomain());
    const before = (await rawRow(domain.id))!.private_keys;
    const rotated = createKeyring(t.database.db, { current: 'n'.repeat(40), previous: SECRET_KEY });
    expect(await resealPrivateKeys(t.database.db, rotated)).toBeGreaterThanOrEqual(1);
    const after = (await rawRow(domain.id))!.private_keys;
    expect(after.split('.')[1]).not.toBe(before.split('.')[1]);
    expect(createSecretBox('n'.repeat(40)).open(after)).toBe(createSecretBox(SECRET_KEY).open(before));
    expect(await resealPrivateKeys(t.database.db, rotated)).toBe(0);
  });
});
