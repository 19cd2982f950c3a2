// The plain part of an HTML email: the conversion, and a template's plan giving the same text for any values.
import { describe, expect, it } from 'vitest';
import { parseTemplate, renderTemplate, type MergeTemplate } from './merge-tags.js';
import { htmlToPlainText, plainTextOf, plainTextPlan } from './plain-text.js';

function parsed(source: string): MergeTemplate {
  const outcome = parseTemplate(source, 'html');
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.problems));
  return outcome.template;
}

function rendered(template: MergeTemplate, variables: Record<string, unknown>): string {
  const outcome = renderTemplate(template, variables);
  if (!outcome.ok) throw new Error(`missing ${outcome.missing.join(', ')}`);
  return outcome.text;
}

describe('htmlToPlainText', () => {
  it('keeps links readable, images as their alt text, cells apart, and drops head, style and script', () => {
    const html =
      '<html><head><title>T</title><style>p{color:red}</style></head><body><p>Visit <a href="https://shop.example/?a=1&amp;b=2">our shop</a>, ' +
      '<a href="https://shop.example">https://shop.example</a> or <a href="mailto:help@shop.example">write</a>.</p>' +
      '<img src="https://t.example/open.gif" width="1"><img src="logo.png" alt="Shop"><table><tr><td>Left</td><td>Right</td></tr></table>' +
      '<script>alert(1)</script></body></html>';
    expect(htmlToPlainText(html)).toBe('Visit our shop [https://shop.example/?a=1&b=2], https://shop.example or write [help@shop.example].\n\nShop\n\nLeft\n\nRight');
  });

  it('does not hard-wrap a paragraph: the reader’s client wraps it to its width', () => {
    const sentence = 'A sentence long enough to pass seventy-eight columns once it is written out twice over.';
    expect(htmlToPlainText(`<p>${sentence} ${sentence}</p>`)).toBe(`${sentence} ${sentence}`);
  });
});

describe('a template’s plan', () => {
  it('is the text converted once, each value’s place marked, upper-cased in a heading', () => {
    const template = parsed('<h1>Thanks, {{ name }}!</h1><p>Your order <strong>{{ order }}</strong> is on its way.</p>');
    expect(plainTextPlan(template)?.parts).toEqual(['THANKS, ', { output: 0, upper: true }, '!\n\nYour order ', { output: 1, upper: false }, ' is on its way.']);
    const variables = { name: 'Ana María', order: 'A-1 & <2>' };
    expect(plainTextOf(template, variables, rendered(template, variables))).toBe('THANKS, ANA MARÍA!\n\nYour order A-1 & <2> is on its way.');
  });

  it.each([
    ['a tag, whose output depends on the values', '<p>{% if vip %}Dear {{ name }}{% endif %}</p>'],
    ['a value in a link’s address', '<a href="https://shop.example/orders/{{ order }}">Your order</a>'],
    ['a value in a link’s text (a text equal to the address hides the address)', '<a href="https://shop.example/">{{ label }}</a>'],
    ['a value in an image’s alt text', '<img src="a.png" alt="{{ name }}">'],
    ['a value after the start of an entity', '<p>&am{{ rest }}</p>'],
    ['no value at all', '<p>Hello</p>'],
    ['the placeholder’s own letters in the HTML', '<p>zqxj0q {{ name }}</p>'],
  ])('is not made for %s', (_why, source) => {
    expect(plainTextPlan(parsed(source))).toBeUndefined();
  });

  it('is made for values in attributes the conversion never reads', () => {
    expect(plainTextPlan(parsed('<td style="color:{{ color }}" class="{{ kind }}" data-id="{{ id }}">Hi {{ name }}</td>'))).toBeDefined();
  });

  // A seeded generator: every run checks the same cases, and a failure names one.
  function random(seed: number) {
    let state = seed;
    return () => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
      return state / 2 ** 31;
    };
  }

  const FRAGMENTS = [
    (v: string) => `<p>Hello ${v}, welcome</p>`,
    (v: string) => `<h2>${v}</h2>`,
    (v: string) => `<p>Order <strong>${v}</strong>.</p>`,
    (v: string) => `<table><tr><th>${v}</th><td> ${v} </td></tr></table>`,
    (v: string) => `<ul><li>${v}</li><li>two ${v}</li></ul>`,
    (v: string) => `<ol><li>${v}</li></ol>`,
    (v: string) => `<blockquote>${v} said</blockquote>`,
    (v: string) => `<pre>${v}  kept</pre>`,
    (v: string) => `<p>${v}<br>${v}</p>`,
    (v: string) => `<p>&amp; ${v}&nbsp;&copy;</p>`,
    (v: string) => `<a href="https://shop.example/${v}">Shop</a>`,
    (v: string) => `<a href="https://shop.example/">${v}</a>`,
    (v: string) => `<a href="${v}">${v}</a>`,
    (v: string) => `<a href="${v}">Shop</a>`,
    (v: string) => `<a href="#top">${v}</a>`,
    (v: string) => `<img src="x.png" alt="${v}">`,
    (v: string) => `<div style="x:${v}">${v}</div>`,
    (v: string) => `<p>&${v}</p>`,
    (v: string) => `<!-- ${v} --><p>after</p>`,
    (v: string) => `<title>${v}</title>`,
    (v: string) => `${v}`,
    () => '<p>{% if a %}yes{% endif %}</p>',
    () => '<hr><p>fixed</p>',
  ];
  const VALUES = [
    'Pat',
    'Ana María',
    'A-1042',
    'Tom & Jerry',
    '<b>bold</b>',
    '"quoted" \'single\'',
    'straße',
    'amp;',
    '#top',
    'mailto:x@y.example',
    'https://shop.example/',
    'Shop',
    'zqxj0q',
    '',
    ' ',
    '  two  spaces  ',
    ' leading',
    'trailing ',
    'line\nbreak',
    'tab\there',
    'non\u00a0breaking',
    'zero\u200bwidth',
    'x'.repeat(120),
    '&lt;',
    '12',
  ];

  it('gives the same text as converting the rendered HTML, for any values (600 random templates)', () => {
    const next = random(20_261_125);
    const pick = <T,>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
    const names = ['a', 'b', 'c'];
    // `raw` writes a value's HTML as it is: its text is not the value.
    const FILTERS = ['', '', '', '', '', '', ' | upcase', ' | raw'];
    let planned = 0;
    for (let run = 0; run < 600; run++) {
      const source = Array.from({ length: 1 + Math.floor(next() * 4) }, () => pick(FRAGMENTS)(`{{ ${pick(names)}${pick(FILTERS)} }}`)).join('\n');
      const template = parsed(source);
      if (plainTextPlan(template)) planned++;
      for (let values = 0; values < 5; values++) {
        const variables = Object.fromEntries(names.map((name) => [name, next() < 0.6 ? pick(VALUES.slice(0, 13)) : pick(VALUES)]));
        const html = rendered(template, variables);
        expect(plainTextOf(template, variables, html), `${source}\n${JSON.stringify(variables)}`).toBe(htmlToPlainText(html));
      }
    }
    // Most random templates have a plan: the comparison above exercised it, not only the conversion.
    expect(planned).toBeGreaterThan(150);
  });
});
