// The merge-tag engine on its own: escaping, strictness and defaults, what it refuses, its limits and determinism.
import { afterEach, describe, expect, it } from 'vitest';
import {
  MergeTagRenderError,
  parseTemplate,
  previewTemplate,
  renderTemplate,
  type MergeTagFormat,
  type MergeTemplate,
} from './merge-tags.js';

function parsed(source: string, format: MergeTagFormat = 'html'): MergeTemplate {
  const outcome = parseTemplate(source, format);
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.problems));
  return outcome.template;
}

const render = (source: string, variables: Record<string, unknown>, format: MergeTagFormat = 'html') => renderTemplate(parsed(source, format), variables);

function renderFailure(source: string, variables: Record<string, unknown>): string {
  try {
    render(source, variables);
  } catch (error) {
    if (error instanceof MergeTagRenderError) return error.message;
    throw error;
  }
  throw new Error('rendered');
}

describe('escaping', () => {
  it('escapes values in HTML, once, and writes them as given in text', () => {
    const value = { v: `<a href="x">'&'</a>` };
    expect(render('{{ v }}', value)).toEqual({ ok: true, text: '&lt;a href=&#34;x&#34;&gt;&#39;&amp;&#39;&lt;/a&gt;' });
    expect(render('{{ v | escape }}|{{ v | escape_once }}', value)).toEqual(render('{{ v }}|{{ v }}', value));
    expect(render('{{ v | upcase }}', value)).toEqual({ ok: true, text: '&lt;A HREF=&#34;X&#34;&gt;&#39;&amp;&#39;&lt;/A&gt;' });
    expect(render('{% echo v %}{% cycle v %}', { v: '<i>' })).toEqual({ ok: true, text: '&lt;i&gt;&lt;i&gt;' });
    expect(render('{{ v | raw }}', value)).toEqual({ ok: true, text: value.v });
    expect(render('{{ v }}', value, 'text')).toEqual({ ok: true, text: value.v });
  });
});

describe('variables', () => {
  it('lists top-level names in order, marking those every use of which has a default or is a condition', () => {
    const template = parsed(
      '{{ user.name }} {{ first_name | default: "there" }} {% if vip and tier == "gold" %}{% endif %}' +
        '{% assign greeting = salutation | default: "Hi" %}{{ greeting }}{% for item in items %}{{ item.sku }}{{ forloop.index }}{% endfor %}' +
        '{{ nick | default: first_name }}{{ city | default: "?" }}{{ city }}',
    );
    expect(template.variables).toEqual([
      { name: 'user', hasDefault: false },
      { name: 'first_name', hasDefault: false },
      { name: 'vip', hasDefault: true },
      { name: 'tier', hasDefault: true },
      { name: 'salutation', hasDefault: true },
      { name: 'items', hasDefault: false },
      { name: 'nick', hasDefault: true },
      { name: 'city', hasDefault: false },
    ]);
  });

  it('names every missing variable once, as written, in order; a default or a condition is not missing', () => {
    expect(render('{{ b.c }} {{ a }} {{ a }} {{ d | default: 1 }} {% if e %}{{ f }}{% endif %}{{ g[0] }}', { b: {} })).toEqual({
      ok: false,
      missing: ['b.c', 'a', 'g[0]'],
    });
    expect(previewTemplate(parsed('Hi {{ a }}, {{ b | default: "you" }}'), {})).toEqual({ text: 'Hi , you', missing: ['a'] });
  });

  it('reads only what the variables themselves hold, never their prototypes', () => {
    expect(render('{{ v.constructor }}{{ v.toString }}', { v: {} })).toEqual({ ok: false, missing: ['v.constructor', 'v.toString'] });
  });
});

describe('what a template cannot do', () => {
  it('reports each problem with its position', () => {
    expect(parseTemplate('ok\n  {{ a | shout }}\n{% include "f" %}{% zzz %}', 'text')).toEqual({
      ok: false,
      problems: [
        { line: 2, column: 3, message: 'undefined filter: shout' },
        { line: 3, column: 1, message: 'tag "include" is not available: a template cannot read other files' },
        { line: 3, column: 18, message: 'tag "zzz" not found' },
      ],
    });
  });

  it('refuses the current time, written in the template or given as a value', () => {
    expect(parseTemplate('{{ "today" | date: "%Y" }}', 'text')).toMatchObject({ ok: false, problems: [{ message: expect.stringMatching(/current time/) }] });
    expect(renderFailure('{{ when | date: "%Y" }}', { when: 'now' })).toMatch(/current time/);
  });

  it('stops at the render limit, the memory limit and the rendered size limit', () => {
    const started = Date.now();
    expect(renderFailure('{% for a in (1..1000) %}{% for b in (1..1000) %}{{ b }}{% endfor %}{% endfor %}', {})).toMatch(/render limit \(1000 ms\)/);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(renderFailure('{% assign s = "x" %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}', {})).toMatch(/memory limit/);
    // Few, long writes: the output outgrows its bound in a few steps, well inside the render time even on a busy machine.
    expect(renderFailure('{% for i in (1..3) %}{{ s }}{% endfor %}', { s: 'x'.repeat(800_000) })).toMatch(/more than 2,000,000 characters/);
  });
});

describe('determinism', () => {
  const zone = process.env.TZ;
  afterEach(() => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  });

  it('renders the same bytes for the same variables, whatever the machine zone or earlier renders', () => {
    const source = '{% increment n %}{% increment n %} {{ n }} {{ at | date: "%a %d %b %Y %H:%M" }}';
    const variables = { n: 5, at: '2024-12-31T23:30:00Z' };
    process.env.TZ = 'Pacific/Kiritimati';
    const first = render(source, variables);
    process.env.TZ = 'America/Los_Angeles';
    expect(render(source, variables)).toEqual(first);
    expect(first).toEqual({ ok: true, text: '56 7 Tue 31 Dec 2024 23:30' });
    expect(variables.n).toBe(5);
  });

  it('parses a text once', () => {
    expect(parseTemplate('Hi {{ a }}', 'html')).toBe(parseTemplate('Hi {{ a }}', 'html'));
    expect(parseTemplate('Hi {{ a }}', 'text')).not.toBe(parseTemplate('Hi {{ a }}', 'html'));
  });
});
