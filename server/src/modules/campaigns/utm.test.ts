// UTM parameters on campaign links: appended, replacing same-named ones, everything else in the URL left as written.
import { describe, expect, it } from 'vitest';
import { applyUtm, withUtm } from './utm.js';

const utm = { source: 'herald', medium: 'push', campaign: 'spring' };
const tail = 'utm_source=herald&utm_medium=push&utm_campaign=spring';

describe('withUtm', () => {
  it.each([
    ['https://shop.example.com/sale', `https://shop.example.com/sale?${tail}`],
    ['https://shop.example.com', `https://shop.example.com/?${tail}`],
    ['https://shop.example.com/?', `https://shop.example.com/?${tail}`],
    ['https://shop.example.com/p?a=1&b=2', `https://shop.example.com/p?a=1&b=2&${tail}`],
    ['https://shop.example.com/p?a=1#reviews', `https://shop.example.com/p?a=1&${tail}#reviews`],
    ['https://shop.example.com/#/cart?step=2', `https://shop.example.com/?${tail}#/cart?step=2`],
    ['https://shop.example.com/p#', `https://shop.example.com/p?${tail}#`],
  ])('%s', (url, expected) => expect(withUtm(url, utm)).toBe(expected));

  it('keeps the exact encoding, order and valueless flags of other parameters', () => {
    expect(withUtm('https://a.example/s?q=a%20b&x=c+d&flag&e=%E2%82%AC', utm)).toBe(`https://a.example/s?q=a%20b&x=c+d&flag&e=%E2%82%AC&${tail}`);
  });

  it('replaces parameters of the same name (however encoded), once, and keeps the others', () => {
    expect(withUtm('https://a.example/?utm_source=old&keep=1&utm%5Fmedium=old&utm_source=older', utm)).toBe(`https://a.example/?keep=1&${tail}`);
    expect(withUtm('https://a.example/?utm_term=x&utm_content=y', { source: 's' })).toBe('https://a.example/?utm_term=x&utm_content=y&utm_source=s');
  });

  it('adds only the parameters given, percent-encoding the values', () => {
    expect(withUtm('https://a.example/', { campaign: 'black friday & more/50%' })).toBe('https://a.example/?utm_campaign=black%20friday%20%26%20more%2F50%25');
    expect(withUtm('https://a.example/?a=1', {})).toBe('https://a.example/?a=1');
  });

  it('leaves a parameter name it cannot decode alone', () => {
    expect(withUtm('https://a.example/?%E0%A4%A=1', { source: 's' })).toBe('https://a.example/?%E0%A4%A=1&utm_source=s');
  });
});

describe('applyUtm', () => {
  it('tags the click URL and every action (the URL its button opens), not the images', () => {
    const content = {
      title: 't',
      body: 'b',
      clickUrl: 'https://a.example/',
      iconUrl: 'https://a.example/icon.png',
      actions: [
        { action: 'https://a.example/open?x=1', title: 'Open' },
        { action: 'https://b.example', title: 'Other' },
      ],
    };
    expect(applyUtm(content, { source: 's' })).toEqual({
      ...content,
      clickUrl: 'https://a.example/?utm_source=s',
      actions: [
        { action: 'https://a.example/open?x=1&utm_source=s', title: 'Open' },
        { action: 'https://b.example/?utm_source=s', title: 'Other' },
      ],
    });
  });

  it('changes nothing without UTM parameters or links', () => {
    const content = { title: 't', body: 'b', clickUrl: 'https://a.example/' };
    expect(applyUtm(content, null)).toBe(content);
    expect(applyUtm({ title: 't', body: 'b' }, { source: 's' })).toEqual({ title: 't', body: 'b' });
  });
});
