// Every dashboard page at 390 × 844 (a phone) against `herald serve` with a realistic project — people, segments, a
// push and an email campaign, an automation, templates, events, suppressions: none scrolls sideways (skipped without a Chromium).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../../server/test/dns-server.js';
import { startSmtpPeer, type SmtpPeer } from '../../server/test/smtp-peer.js';
import { ADMIN, api, findChromium, sidewaysOverflow, startSession, type Herald, type Session } from './browser.js';

const chromiumPath = findChromium();
const DOMAIN = 'mail.example-shop.com';

describe.skipIf(!chromiumPath)('every page at 390 px in Chromium', { timeout: 240_000 }, () => {
  let session: Session;
  let herald: Herald;
  let auth: Record<string, string>;
  let projectId: string;
  let dns: DnsServer;
  let peer: SmtpPeer;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    dns = await startDnsServer();
    peer = await startSmtpPeer();
    session = await startSession(chromiumPath!, { DNS_SERVERS: dns.address });
    ({ herald, auth, projectId } = session);
    const post = <T = { id: string }>(url: string, body: unknown, headers = auth) => api<T>(herald, 'POST', url, body, headers);

    const domain = await post<{ id: string; records: { name: string; value: string; checked: boolean }[] }>(`/projects/${projectId}/email-domains`, { domain: DOMAIN });
    for (const record of domain.records) if (record.checked) dns.setTxt(record.name, record.value);
    await post(`/projects/${projectId}/email-domains/${domain.id}/verify`, undefined);
    await api(herald, 'PUT', `/projects/${projectId}/channels/email`, { provider: 'smtp', settings: { host: peer.host, port: peer.port, secure: false } }, auth);
    const key = await post<{ key: string }>(`/projects/${projectId}/api-keys`, { name: 'Production web shop server', mode: 'live' });
    const server = { 'x-api-key': key.key };

    const people = [
      ['Margaret Hamilton-Lovelace', 'margaret.hamilton-lovelace@very-long-company-domain.example.com', '+442071838750', ['vip', 'newsletter', 'spring-2026-promotion']],
      ['Grace Hopper', 'grace@example.org', '+14155550123', ['newsletter']],
      ['Alan Turing', 'alan@example.net', null, ['trial']],
      ['Ada', 'ada@example.org', '+33142685300', []],
    ] as const;
    for (const [index, [name, email, phone, tags]] of people.entries()) {
      const person = await post('/contacts', {
        projectId,
        externalId: `customer-${index + 1000}`,
        email,
        ...(phone ? { phone } : {}),
        tags,
        attributes: { name, plan: index === 0 ? 'enterprise' : 'pro', seats: index + 2, company: { name: 'Example Shop International Ltd', country: 'GB' } },
      });
      ids[`person${index}`] = person.id;
    }
    await post('/events', { name: 'checkout.completed', externalId: 'customer-1000', properties: { total: 129.9, currency: 'EUR', items: ['sku-123456789'] }, eventId: 'order-1' }, server);
    ids.segment = (await post('/segments', { projectId, name: 'VIP newsletter readers in spring', filters: { tags: { any: ['vip', 'newsletter'] } } })).id;
    ids.template = (
      await post('/email-templates', { projectId, name: 'Spring newsletter', subject: 'News for {{ name | default: "you" }}', html: '<h1>Spring</h1><p>Hello {{ name }}</p>' })
    ).id;
    ids.whatsappTemplate = (
      await post(`/projects/${projectId}/whatsapp-templates`, {
        name: 'order_shipped_notification',
        language: 'en_US',
        category: 'UTILITY',
        status: 'APPROVED',
        components: [{ type: 'BODY', text: 'Your order {{1}} has shipped.' }],
      })
    ).id;
    ids.pushCampaign = (
      await post('/campaigns', { projectId, name: 'Spring sale push to every browser', content: { title: 'Spring sale', body: '20 % off everything until Sunday', clickUrl: 'https://shop.example.com/spring' }, segment: { filters: {} }, schedule: { mode: 'immediate' } })
    ).id;
    ids.pushDraft = (await post('/campaigns', { projectId, name: 'Draft push', content: { title: 'Soon', body: 'Something new' }, segment: { filters: {} }, schedule: { mode: 'draft' } })).id;
    ids.emailCampaign = (
      await post('/email-campaigns', {
        projectId,
        name: 'Spring newsletter to VIP readers',
        content: { subject: 'Spring is here', html: '<p>Hello</p><p><a href="https://shop.example.com/spring">The sale</a></p>', from: { email: `news@${DOMAIN}` } },
        segment: { filters: { tags: { any: ['newsletter'] } } },
        schedule: { mode: 'immediate' },
      })
    ).id;
    ids.emailDraft = (
      await post('/email-campaigns', {
        projectId,
        name: 'Summer draft',
        content: { subject: 'Summer', html: '<p>Soon</p>', from: { email: `news@${DOMAIN}` } },
        segment: { filters: {} },
        schedule: { mode: 'draft', localTime: false },
      })
    ).id;
    ids.automation = (await post('/automations/from-starter', { projectId, starter: 'welcome-series', name: 'Welcome series for new shoppers' })).id;
    await post(`/projects/${projectId}/suppressions`, { email: 'bounced.address.with.a.long.local.part@example.com', reason: 'bounced' });
    await post('/transactional/send', { externalId: 'nobody', title: 'Hi', body: 'there' }, server);
    await post('/invitations', { email: 'new.colleague@example.com', role: 'MEMBER' }).catch(() => undefined);
    await post('/projects', { name: 'Second shop' });
  }, 180_000);

  afterAll(async () => {
    await session?.stop();
    await peer?.close();
    await dns?.close();
  }, 60_000);

  /** The page's first reads done: a heading shown and nothing loading. */
  async function settle(page: Page) {
    await page.locator('main h1, main h2').first().waitFor();
    await expect.poll(() => page.getByText('Loading…').count(), { timeout: 10_000 }).toBe(0);
    await page.waitForTimeout(150);
  }

  it('no page scrolls sideways at 390 × 844', async () => {
    const { context, page } = await session.newPage({ viewport: { width: 390, height: 844 } });
    const overflowing: Record<string, string[]> = {};
    const check = async (path: string) => {
      await page.goto(`${herald.url}/app${path}`);
      await settle(page);
      const found = await sidewaysOverflow(page);
      if (found.length > 0) overflowing[path] = found;
    };

    await page.goto(`${herald.url}/app/login`);
    await page.getByLabel('Email').waitFor();
    const login = await sidewaysOverflow(page);
    if (login.length > 0) overflowing['/login'] = login;
    await session.openDemo(page, ADMIN);

    const p = `/projects/${projectId}`;
    const pages = [
      '/projects',
      '/members',
      `${p}/overview`,
      `${p}/overview?days=90`,
      `${p}/campaigns`,
      `${p}/campaigns/new`,
      `${p}/campaigns/${ids.pushCampaign}`,
      `${p}/campaigns/${ids.pushDraft}/edit`,
      `${p}/email-campaigns`,
      `${p}/email-campaigns/new`,
      `${p}/email-campaigns/${ids.emailCampaign}`,
      `${p}/email-campaigns/${ids.emailDraft}/edit`,
      `${p}/automations`,
      `${p}/automations/new`,
      `${p}/automations/${ids.automation}`,
      `${p}/automations/${ids.automation}/enrollments`,
      `${p}/transactional`,
      `${p}/subscribers`,
      `${p}/subscribers/${ids.person0}`,
      `${p}/segments`,
      `${p}/segments/new`,
      `${p}/segments/${ids.segment}`,
      `${p}/events`,
      `${p}/import`,
      `${p}/audience`,
      `${p}/email-templates`,
      `${p}/email-templates/new`,
      `${p}/email-templates/${ids.template}`,
      `${p}/whatsapp-templates`,
      `${p}/whatsapp-templates/new`,
      `${p}/whatsapp-templates/${ids.whatsappTemplate}`,
      `${p}/settings`,
      `${p}/domains`,
      `${p}/email-provider`,
      `${p}/suppressions`,
      `${p}/sms`,
      `${p}/whatsapp`,
      `${p}/keys`,
    ];
    for (const path of pages) await check(path);

    // The menu open, on a page with the most to show.
    await page.goto(`${herald.url}/app${p}/subscribers/${ids.person0}`);
    await settle(page);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('navigation', { name: 'Project' }).waitFor();
    const menu = await sidewaysOverflow(page);
    if (menu.length > 0) overflowing['the open menu'] = menu;

    expect(overflowing).toEqual({});
    await context.close();
  });
});
