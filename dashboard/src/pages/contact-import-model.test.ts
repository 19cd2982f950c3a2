// The import page's reading of a CSV header and samples, its guesses, and the mapping it sends.
import { describe, expect, it } from 'vitest';
import { columnOfField, columnsOf, guessColumn, guessType, importParams, mappingProblems, readCsv, withListedType } from './contact-import-model';

describe('readCsv', () => {
  it('reads quoted cells, doubled quotes, line breaks inside quotes, CRLF and a byte order mark; stops after the rows asked', () => {
    const text = '\ufeffName,"Note, long"\r\n"Ada ""A"" L","two\nlines"\r\n\r\nBob,x\nCy,y\n';
    expect(readCsv(text, 2)).toEqual([
      ['Name', 'Note, long'],
      ['Ada "A" L', 'two\nlines'],
      ['Bob', 'x'],
    ]);
    expect(readCsv('a,b', 5)).toEqual([['a', 'b']]);
  });
});

describe('guesses', () => {
  it('maps usual header names to fields and others to attributes in snake case', () => {
    expect(guessColumn('E-mail', []).destination).toBe('email');
    expect(guessColumn('Mobile phone', []).destination).toBe('phone');
    expect(guessColumn('Customer ID', []).destination).toBe('externalId');
    expect(guessColumn('Time zone', []).destination).toBe('timezone');
    expect(guessColumn('marketingConsent.sms', []).destination).toBe('header');
    expect(guessColumn('First name', [])).toMatchObject({ destination: 'attribute', attribute: 'first_name' });
    expect(guessColumn('attributes.plan', [])).toMatchObject({ destination: 'attribute', attribute: 'plan' });
    expect(guessColumn('Café № 1', [])).toMatchObject({ destination: 'attribute', attribute: 'cafe_no_1' });
    expect(guessColumn('---', []).destination).toBe('skip');
  });

  it('guesses a type every sample reads as', () => {
    expect(guessType(['Yes', 'no', ''])).toBe('boolean');
    expect(guessType(['1,234.5', '-3', '0'])).toBe('number');
    expect(guessType(['2024-03-01', '2024-03-01T10:00:00Z'])).toBe('date');
    expect(guessType(['12', 'twelve'])).toBe('text');
    expect(guessType(['', ' '])).toBe('text');
  });
});

describe('the upload', () => {
  const columns = columnsOf('E-mail,First name,Score,Notes\na@example.com,Ada,10,x\nb@example.com,Bo,12.5,y\n');

  it('sends every column with its destination and every attribute with its type', () => {
    columns[3]!.destination = 'skip';
    expect(importParams(columns)).toEqual({
      mapping: JSON.stringify({ 'E-mail': 'email', 'First name': 'attributes.first_name', Score: 'attributes.score', Notes: null }),
      types: JSON.stringify({ first_name: 'text', score: 'number' }),
    });
    expect(columnOfField(columns, 'attributes.score')).toBe('Score');
    expect(columnOfField(columns, 'email')).toBe('E-mail');
  });

  it('names an attribute without a name and a second column going to the same place', () => {
    const twice = columns.map((column) => ({ ...column }));
    twice[1]!.attribute = ' ';
    twice[2]!.destination = 'email';
    expect(mappingProblems(twice)).toEqual(
      new Map([
        [1, 'Enter a name for this attribute.'],
        [2, 'Column “E-mail” already goes there: choose another place or Skip.'],
      ]),
    );
  });
});

describe('withListedType', () => {
  const listed = new Map([['score', 'number' as const]]);
  it("gives an attribute column the listed attribute's type, and leaves the others as guessed", () => {
    expect(withListedType(guessColumn('Score', ['n/a']), listed).type).toBe('number');
    expect(withListedType(guessColumn('Notes', ['12']), listed).type).toBe('number');
    expect(withListedType(guessColumn('Notes', ['n/a']), listed).type).toBe('text');
    expect(withListedType({ ...guessColumn('Score', ['x']), destination: 'skip' }, listed).type).toBe('text');
  });
});
