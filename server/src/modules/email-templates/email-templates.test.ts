// Email templates through HTTP on a real database: CRUD, merge-tag checks and rendering, previews, environments, tenancy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createTenant, publishableKey, startWithTwoTenants, type Tenant } from '../../../test/fixtures.js';
import type { TestApp } from '../../../test/harness.js';

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

interface Template {
  id: string;
  name: string;
  subject: string;
  html: string;
  text: string | null;
  preheader: string | null;
  variables: { name: string; hasDefault: boolean }[];
  sandbox: boolean;
  design: unknown;
  updatedAt: string;
}

async function createTemplate(who: Tenant, fields: Record<string, unknown> = {}, headers: Headers = who.jwt): Promise<Template> {
  const res = await request('POST', '/email-templates', headers, {
    projectId: who.projectId,
    name: 'Welcome',
    subject: 'Welcome, {{ first_name | default: "friend" }}',
    html: '<p>Hello {{ first_name }}</p>',
    ...fields,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<Template>();
}

async function storedRow(id: string) {
  const { rows } = await t.database.pool.query(
    'SELECT project_id, sandbox, name, subject, html, text, preheader, variables FROM email_templates WHERE id = $1',
    [id],
  );
  return rows[0] as Record<string, unknown> | undefined;
}

const preview = (id: string, variables: Record<string, unknown>, headers: Headers = tenant.jwt) =>
  request('POST', `/email-templates/${id}/preview`, headers, { variables });

const fieldsOf = (body: string) => (JSON.parse(body) as { details?: { field: string }[] }).details?.map((detail) => detail.field);

describe('email templates CRUD', () => {
  it('creates, reads, lists, changes and deletes a template, row by row', async () => {
    const created = await createTemplate(tenant, {
      name: 'Order shipped',
      subject: 'Order {{ order.number }} shipped',
      html: '<h1>Hi {{ first_name | default: "there" }}</h1><p>Track it <a href="{{ tracking_url }}">here</a>.</p>',
      preheader: 'On its way, {{ first_name | default: "friend" }}',
    });
    expect(created).toMatchObject({
      projectId: tenant.projectId,
      name: 'Order shipped',
      text: null,
      preheader: 'On its way, {{ first_name | default: "friend" }}',
      sandbox: false,
      variables: [
        { name: 'order', hasDefault: false },
        { name: 'first_name', hasDefault: true },
        { name: 'tracking_url', hasDefault: false },
      ],
    });
    expect(created.id).toMatch(/^etp_/);
    expect(await storedRow(created.id)).toEqual({
      project_id: tenant.projectId,
      sandbox: false,
      name: 'Order shipped',
      subject: 'Order {{ order.number }} shipped',
      html: created.html,
      text: null,
      preheader: created.preheader,
      variables: created.variables,
    });

    expect((await request('GET', `/email-templates/${created.id}`, tenant.live)).json()).toEqual(created);

    const list = await request('GET', `/email-templates/project/${tenant.projectId}`, tenant.jwt);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ page: 1, pageSize: 20 });
    const listed = list.json().data.find((item: { id: string }) => item.id === created.id);
    const { html: _html, text: _text, design: _design, ...summary } = created;
    expect(listed).toEqual(summary);

    const patched = await request('PATCH', `/email-templates/${created.id}`, tenant.jwt, {
      subject: 'Shipped: {{ order.number }} to {{ city }}',
      text: 'Track it at {{ tracking_url }}',
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ name: 'Order shipped', html: created.html, text: 'Track it at {{ tracking_url }}' });
    expect(patched.json().variables.map((v: { name: string }) => v.name)).toEqual(['order', 'city', 'first_name', 'tracking_url']);
    expect(Date.parse(patched.json().updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
    expect(await storedRow(created.id)).toMatchObject({ subject: 'Shipped: {{ order.number }} to {{ city }}', text: 'Track it at {{ tracking_url }}' });

    const cleared = await request('PATCH', `/email-templates/${created.id}`, tenant.jwt, { text: null, preheader: null, name: 'Shipped' });
    expect(cleared.json()).toMatchObject({ name: 'Shipped', text: null, preheader: null });
    expect(await storedRow(created.id)).toMatchObject({ name: 'Shipped', text: null, preheader: null });

    expect((await request('DELETE', `/email-templates/${created.id}`, tenant.jwt)).statusCode).toBe(204);
    expect(await storedRow(created.id)).toBeUndefined();
    expect((await request('GET', `/email-templates/${created.id}`, tenant.jwt)).statusCode).toBe(404);
    expect((await request('DELETE', `/email-templates/${created.id}`, tenant.jwt)).statusCode).toBe(404);
    expect((await request('PATCH', `/email-templates/${created.id}`, tenant.jwt, { name: 'x' })).statusCode).toBe(404);
  });

  it('pages the list and searches names, % and _ taken literally', async () => {
    const owner = await createTenant(t);
    for (const name of ['Receipt 100%', 'Receipt 1000', 'Password_reset', 'Password reset']) await createTemplate(owner, { name });
    const list = async (query: string) => {
      const res = await request('GET', `/email-templates/project/${owner.projectId}?${query}`, owner.live);
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ data: { name: string }[]; total: number; pageSize: number }>();
    };
    expect((await list('q=receipt')).data.map((item) => item.name)).toEqual(['Receipt 1000', 'Receipt 100%']);
    expect((await list('q=100%25')).data.map((item) => item.name)).toEqual(['Receipt 100%']);
    expect((await list('q=d_r')).data.map((item) => item.name)).toEqual(['Password_reset']);
    const paged = await list('page=2&pageSize=3');
    expect(paged).toMatchObject({ total: 4, pageSize: 3 });
    expect(paged.data.map((item) => item.name)).toEqual(['Receipt 100%']);
    expect((await request('GET', `/email-templates/project/${owner.projectId}?pageSize=101`, owner.live)).statusCode).toBe(422);
  });

  it('bounds the parts and refuses a subject of several lines', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ html: `<p>${'x'.repeat(512 * 1024)}</p>` }, 'html'],
      [{ text: 'é'.repeat(128 * 1024 + 1) }, 'text'],
      [{ subject: 'Hello\r\nBcc: victim@example.com' }, 'subject'],
      [{ preheader: 'p'.repeat(1001) }, 'preheader'],
      [{ name: '  ' }, 'name'],
      [{ html: '' }, 'html'],
    ];
    for (const [fields, field] of cases) {
      const res = await request('POST', '/email-templates', tenant.jwt, { projectId: tenant.projectId, name: 'x', subject: 's', html: '<p>h</p>', ...fields });
      expect(res.statusCode, field).toBe(422);
      expect(fieldsOf(res.body)).toEqual([field]);
    }
    // Just under the limit is taken.
    await createTemplate(tenant, { html: 'x'.repeat(512 * 1024) });
  });
});

describe('merge tags when saving', () => {
  it.each<[string, Record<string, string>, string, RegExp]>([
    ['an include', { html: '<p>{% include "footer.html" %}</p>' }, 'html', /line 1, column 4: tag "include" is not available/],
    ['a render', { text: 'Hi\n{% render "secrets" %}' }, 'text', /line 2, column 1: tag "render" is not available/],
    ['a layout', { html: '{% layout "base" %}' }, 'html', /tag "layout" is not available/],
    ['an unknown filter', { subject: 'Hi {{ first_name | shout }}' }, 'subject', /line 1, column 4: undefined filter: shout/],
    ['a random pick', { preheader: '{{ offers | sample }}' }, 'preheader', /undefined filter: sample/],
    ['the current time', { html: '<p>© {{ "now" | date: "%Y" }}</p>' }, 'html', /the current time is not available/],
    ['an unclosed tag', { html: '{% if vip %}<p>VIP</p>' }, 'html', /tag {% if vip %} not closed/],
    ['an unclosed output', { subject: 'Hi {{ first_name' }, 'subject', /output "{{ first_name" not closed/],
  ])('refuses %s with 422 naming the part', async (_what, fields, field, message) => {
    const res = await request('POST', '/email-templates', tenant.jwt, {
      projectId: tenant.projectId,
      name: 'Refused',
      subject: 'Hello',
      html: '<p>Hello</p>',
      ...fields,
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json()).toMatchObject({ code: 'validation_failed' });
    expect(res.json().details).toEqual([{ field, error: expect.stringMatching(message) }]);
  });

  it('names every part that does not parse, and stores nothing', async () => {
    const owner = await createTenant(t);
    const res = await request('POST', '/email-templates', owner.jwt, {
      projectId: owner.projectId,
      name: 'Broken',
      subject: '{{ a | nope }}',
      html: '{% include "x" %}',
      text: 'fine {{ a }}',
    });
    expect(res.statusCode).toBe(422);
    expect(fieldsOf(res.body)).toEqual(['subject', 'html']);
    const { rows } = await t.database.pool.query('SELECT count(*)::int AS n FROM email_templates WHERE project_id = $1', [owner.projectId]);
    expect(rows[0].n).toBe(0);
  });

  it('checks a change against the template as changed, and keeps the stored one when it fails', async () => {
    const template = await createTemplate(tenant);
    const res = await request('PATCH', `/email-templates/${template.id}`, tenant.jwt, { html: '{% include "x" %}', name: 'Renamed' });
    expect(res.statusCode).toBe(422);
    expect(fieldsOf(res.body)).toEqual(['html']);
    expect(await storedRow(template.id)).toMatchObject({ name: 'Welcome', html: template.html });
  });
});

const DESIGN = {
  version: 1,
  settings: { backgroundColor: '#f4f4f5', contentColor: '#ffffff', textColor: '#18181b', fontFamily: 'sans-serif' },
  blocks: [
    { type: 'text', id: 'title', style: 'heading', text: 'Hello {{ first_name | default: "there" }}', align: 'left' },
    {
      type: 'columns',
      id: 'cols',
      columns: [
        [{ type: 'button', id: 'buy', label: 'Buy', url: 'https://example.com/buy', color: '#2563eb', textColor: '#ffffff', align: 'center' }],
        [{ type: 'spacer', id: 'gap', height: 16 }],
      ],
    },
  ],
};

describe('the visual editor\'s design', () => {
  it('stores the design beside the html, answers it as given, drops it from lists, and clears it when html changes alone', async () => {
    const created = await createTemplate(tenant, { design: DESIGN });
    expect(created).toMatchObject({ design: DESIGN });
    expect((await request('GET', `/email-templates/${created.id}`, tenant.jwt)).json()).toMatchObject({ design: DESIGN });
    const { rows } = await t.database.pool.query('SELECT design FROM email_templates WHERE id = $1', [created.id]);
    expect(rows[0].design).toEqual(DESIGN);
    const list = await request('GET', `/email-templates/project/${tenant.projectId}?q=Welcome`, tenant.jwt);
    expect(list.json().data[0]).not.toHaveProperty('design');

    const renamed = await request('PATCH', `/email-templates/${created.id}`, tenant.jwt, { name: 'Renamed' });
    expect(renamed.json()).toMatchObject({ name: 'Renamed', design: DESIGN });
    const changed = { ...DESIGN, blocks: DESIGN.blocks.slice(0, 1) };
    const redesigned = await request('PATCH', `/email-templates/${created.id}`, tenant.jwt, { html: '<p>New</p>', design: changed });
    expect(redesigned.json()).toMatchObject({ html: '<p>New</p>', design: changed });
    const handWritten = await request('PATCH', `/email-templates/${created.id}`, tenant.jwt, { html: '<p>By hand</p>' });
    expect(handWritten.json()).toMatchObject({ html: '<p>By hand</p>', design: null });
    expect((await createTemplate(tenant)).design).toBeNull();
  });

  it('refuses a design that is not a block document with 422 naming the field, and a design over 256 KiB', async () => {
    const bad = {
      ...DESIGN,
      blocks: [
        { type: 'button', id: 'b', label: 'Go', url: 'javascript:alert(1)', color: '#2563eb', textColor: 'white', align: 'center' },
        { type: 'video', id: 'v' },
      ],
    };
    const res = await request('POST', '/email-templates', tenant.jwt, { projectId: tenant.projectId, name: 'Bad', subject: 'S', html: '<p>x</p>', design: bad });
    expect(res.statusCode, res.body).toBe(422);
    expect(fieldsOf(res.body)).toEqual(expect.arrayContaining(['design.blocks.0.url', 'design.blocks.0.textColor', 'design.blocks.1.type']));
    const huge = { ...DESIGN, blocks: Array.from({ length: 30 }, (_, i) => ({ type: 'text', id: `t${i}`, style: 'paragraph', text: 'x'.repeat(10_000), align: 'left' })) };
    const tooBig = await request('POST', '/email-templates', tenant.jwt, { projectId: tenant.projectId, name: 'Big', subject: 'S', html: '<p>x</p>', design: huge });
    expect(tooBig.statusCode).toBe(422);
    expect(tooBig.json().details).toEqual([{ field: 'design', error: expect.stringMatching(/256 KiB/) }]);
  });
});

describe('rendering', () => {
  it('escapes values in the HTML and not in the subject, preheader or text', async () => {
    const template = await createTemplate(tenant, {
      subject: 'For {{ name }}',
      preheader: 'Dear {{ name }}',
      html: '<p>Hi {{ name }}</p><p>{{ note | raw }}</p>',
      text: 'Hi {{ name }}',
    });
    const variables = { name: '<script>alert("x")</script> & co', note: '<b>bold</b>' };
    const res = await preview(template.id, variables);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      subject: 'For <script>alert("x")</script> & co',
      preheader: 'Dear <script>alert("x")</script> & co',
      html: '<p>Hi &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; co</p><p><b>bold</b></p>',
      text: 'Hi <script>alert("x")</script> & co',
      missing: [],
    });
  });

  it('generates the text part from the rendered HTML when the template has none', async () => {
    const template = await createTemplate(tenant, {
      html: '<h2>Hi {{ name }}</h2><p>See <a href="https://shop.example/o/{{ order }}?a=1&amp;b=2">your order</a>.</p><img src="https://t.example/p.gif">',
    });
    const res = await preview(template.id, { name: 'Ada & Bob', order: 42 });
    expect(res.json().text).toBe('HI ADA & BOB\n\nSee your order [https://shop.example/o/42?a=1&b=2].');
  });

  it('uses a default where a variable is missing, the value where it is given', async () => {
    const template = await createTemplate(tenant, { html: '<p>Hello {{ first_name | default: "there" }}</p>' });
    expect((await preview(template.id, {})).json()).toMatchObject({ html: '<p>Hello there</p>', missing: [] });
    expect((await preview(template.id, { first_name: 'Ada' })).json()).toMatchObject({ html: '<p>Hello Ada</p>', missing: [] });
    const render = await t.services.emailTemplates.render({ organizationId: tenant.orgId, projectId: tenant.projectId, sandbox: false }, template.id, {});
    expect(render).toEqual({ ok: true, subject: 'Welcome, friend', html: '<p>Hello there</p>', text: 'Hello there', preheader: null });
  });

  it('names the missing variables: the preview renders the rest, a send is refused', async () => {
    const template = await createTemplate(tenant, {
      subject: 'Order {{ order.number }}',
      html: '<p>Hi {{ first_name }}</p>{% for item in items %}<li>{{ item.name }}: {{ item.price }}</li>{% endfor %}<p>{{ first_name }}</p>',
    });
    const res = await preview(template.id, { order: {}, items: [{ name: 'Tea' }] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      subject: 'Order ',
      html: '<p>Hi </p><li>Tea: </li><p></p>',
      missing: ['order.number', 'first_name', 'item.price'],
    });

    const scope = { organizationId: tenant.orgId, projectId: tenant.projectId, sandbox: false };
    expect(await t.services.emailTemplates.render(scope, template.id, { order: {}, items: [{ name: 'Tea' }] })).toEqual({
      ok: false,
      reason: 'template_variables_missing',
      missing: ['order.number', 'first_name', 'item.price'],
    });
    expect(await t.services.emailTemplates.render(scope, template.id, { order: { number: 7 }, first_name: 'Ada', items: [] })).toEqual({
      ok: true,
      subject: 'Order 7',
      html: '<p>Hi Ada</p><p>Ada</p>',
      text: 'Hi Ada\n\nAda',
      preheader: null,
    });
    expect(await t.services.emailTemplates.render(scope, 'etp_unknown', {})).toEqual({ ok: false, reason: 'template_not_found' });
  });

  it('keeps the subject on one line whatever the values hold', async () => {
    const template = await createTemplate(tenant, { subject: 'Hi {{ name }}' });
    expect((await preview(template.id, { name: 'Ada\r\nBcc: victim@example.com' })).json().subject).toBe('Hi Ada Bcc: victim@example.com');
  });

  it('stops a pathological template at the render limit with a clear error', async () => {
    const loops = '{% for a in (1..1000) %}{% for b in (1..1000) %}{% for c in (1..1000) %}x{% endfor %}{% endfor %}{% endfor %}';
    const template = await createTemplate(tenant, { html: `<p>${loops}</p>` });
    const started = Date.now();
    const res = await preview(template.id, {});
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({
      code: 'template_render_failed',
      details: [{ field: 'html', error: expect.stringMatching(/render limit \(1000 ms\)/) }],
    });
    const scope = { organizationId: tenant.orgId, projectId: tenant.projectId, sandbox: false };
    expect(await t.services.emailTemplates.render(scope, template.id, {})).toEqual({
      ok: false,
      reason: 'template_render_failed',
      field: 'html',
      error: expect.stringMatching(/render limit/),
    });
  });

  it('stops a variable that would build an absurd output at the memory limit', async () => {
    const template = await createTemplate(tenant, { text: '{% for i in (1..count) %}.{% endfor %}' });
    const res = await preview(template.id, { count: 1e9 });
    expect(res.statusCode).toBe(422);
    expect(res.json().details).toEqual([{ field: 'text', error: expect.stringMatching(/memory limit/) }]);
  });

  it('previews unsaved content with the variables it reads, checked like a save', async () => {
    const res = await request('POST', '/email-templates/preview', tenant.jwt, {
      projectId: tenant.projectId,
      subject: 'Hi {{ first_name | default: "there" }}',
      html: '<p>{{ code }}</p>',
      variables: { code: '<42>' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      subject: 'Hi there',
      html: '<p>&lt;42&gt;</p>',
      text: '<42>',
      preheader: null,
      missing: [],
      variables: [
        { name: 'first_name', hasDefault: true },
        { name: 'code', hasDefault: false },
      ],
    });
    const refused = await request('POST', '/email-templates/preview', tenant.jwt, { projectId: tenant.projectId, subject: 's', html: '{% include "a" %}' });
    expect(refused.statusCode).toBe(422);
    expect(fieldsOf(refused.body)).toEqual(['html']);
    const { rows } = await t.database.pool.query("SELECT count(*)::int AS n FROM email_templates WHERE subject = 's'");
    expect(rows[0].n).toBe(0);
  });
});

describe('who sees which template', () => {
  it('keeps test keys to sandbox templates; live keys and users see both environments', async () => {
    const owner = await createTenant(t);
    const live = await createTemplate(owner, { name: 'Live' }, owner.live);
    const sandbox = await createTemplate(owner, { name: 'Sandbox' }, owner.test);
    expect(sandbox.sandbox).toBe(true);
    expect(await storedRow(sandbox.id)).toMatchObject({ sandbox: true });
    expect(await storedRow(live.id)).toMatchObject({ sandbox: false });

    const names = async (headers: Headers) =>
      (await request('GET', `/email-templates/project/${owner.projectId}`, headers)).json().data.map((item: { name: string }) => item.name);
    expect(await names(owner.test)).toEqual(['Sandbox']);
    expect(await names(owner.live)).toEqual(['Sandbox', 'Live']);
    expect(await names(owner.jwt)).toEqual(['Sandbox', 'Live']);

    expect((await request('GET', `/email-templates/${live.id}`, owner.test)).statusCode).toBe(404);
    expect((await request('PATCH', `/email-templates/${live.id}`, owner.test, { html: '<p>phish</p>' })).statusCode).toBe(404);
    expect((await preview(live.id, {}, owner.test)).statusCode).toBe(404);
    expect((await request('DELETE', `/email-templates/${live.id}`, owner.test)).statusCode).toBe(404);
    expect(await storedRow(live.id)).toMatchObject({ html: live.html });

    expect((await request('GET', `/email-templates/${sandbox.id}`, owner.live)).statusCode).toBe(200);
    expect((await request('PATCH', `/email-templates/${sandbox.id}`, owner.test, { name: 'Sandbox 2' })).statusCode).toBe(200);

    // A send renders a template of its own environment only.
    const liveScope = { organizationId: owner.orgId, projectId: owner.projectId, sandbox: false };
    const sandboxScope = { ...liveScope, sandbox: true };
    const variables = { first_name: 'Ada' };
    expect(await t.services.emailTemplates.render(liveScope, sandbox.id, variables)).toEqual({ ok: false, reason: 'template_not_found' });
    expect(await t.services.emailTemplates.render(sandboxScope, live.id, variables)).toEqual({ ok: false, reason: 'template_not_found' });
    expect(await t.services.emailTemplates.render(sandboxScope, sandbox.id, variables)).toMatchObject({ ok: true, html: '<p>Hello Ada</p>' });
  });

  it('keeps templates inside their project and organization', async () => {
    const template = await createTemplate(tenant);
    for (const headers of [other.jwt, other.live, other.test]) {
      expect((await request('GET', `/email-templates/${template.id}`, headers)).statusCode).toBe(404);
      expect((await request('PATCH', `/email-templates/${template.id}`, headers, { name: 'stolen' })).statusCode).toBe(404);
      expect((await preview(template.id, {}, headers)).statusCode).toBe(404);
      expect((await request('DELETE', `/email-templates/${template.id}`, headers)).statusCode).toBe(404);
    }
    expect((await request('GET', `/email-templates/project/${tenant.projectId}`, other.jwt)).statusCode).toBe(404);
    expect((await request('GET', `/email-templates/project/${tenant.projectId}`, other.live)).statusCode).toBe(403);
    const body = { projectId: tenant.projectId, name: 'x', subject: 's', html: '<p>h</p>' };
    expect((await request('POST', '/email-templates', other.jwt, body)).statusCode).toBe(404);
    expect((await request('POST', '/email-templates', other.live, body)).statusCode).toBe(403);
    expect((await request('POST', '/email-templates/preview', other.live, { projectId: tenant.projectId, subject: 's', html: 'h' })).statusCode).toBe(403);
    const otherScope = { organizationId: other.orgId, projectId: other.projectId, sandbox: false };
    expect(await t.services.emailTemplates.render(otherScope, template.id, {})).toEqual({ ok: false, reason: 'template_not_found' });
    expect(await storedRow(template.id)).toMatchObject({ name: 'Welcome' });
  });

  it('lets a VIEWER read and preview but not write', async () => {
    const viewer = await addMember(t, tenant, 'VIEWER');
    const template = await createTemplate(tenant);
    expect((await request('GET', `/email-templates/${template.id}`, viewer.headers)).statusCode).toBe(200);
    expect((await request('GET', `/email-templates/project/${tenant.projectId}`, viewer.headers)).statusCode).toBe(200);
    expect((await preview(template.id, { first_name: 'Ada' }, viewer.headers)).statusCode).toBe(200);
    const body = { projectId: tenant.projectId, name: 'x', subject: 's', html: '<p>h</p>' };
    const unsaved = { projectId: tenant.projectId, subject: 's', html: '<p>h</p>' };
    expect((await request('POST', '/email-templates/preview', viewer.headers, unsaved)).statusCode).toBe(200);
    expect((await request('POST', '/email-templates', viewer.headers, body)).statusCode).toBe(403);
    expect((await request('PATCH', `/email-templates/${template.id}`, viewer.headers, { name: 'x' })).statusCode).toBe(403);
    expect((await request('DELETE', `/email-templates/${template.id}`, viewer.headers)).statusCode).toBe(403);
    expect(await storedRow(template.id)).toMatchObject({ name: 'Welcome' });
  });

  it('refuses a publishable key on every route', async () => {
    const browser = await publishableKey(t, tenant);
    const template = await createTemplate(tenant);
    const body = { projectId: tenant.projectId, name: 'x', subject: 's', html: '<p>h</p>' };
    const answers = [
      await request('POST', '/email-templates', browser, body),
      await request('POST', '/email-templates/preview', browser, { projectId: tenant.projectId, subject: 's', html: '<p>h</p>' }),
      await request('GET', `/email-templates/project/${tenant.projectId}`, browser),
      await request('GET', `/email-templates/${template.id}`, browser),
      await request('PATCH', `/email-templates/${template.id}`, browser, { name: 'x' }),
      await preview(template.id, {}, browser),
      await request('DELETE', `/email-templates/${template.id}`, browser),
    ];
    for (const res of answers) expect(res.json()).toMatchObject({ statusCode: 403, code: 'publishable_key_forbidden' });
    expect(await storedRow(template.id)).toMatchObject({ name: 'Welcome' });
  });
});
