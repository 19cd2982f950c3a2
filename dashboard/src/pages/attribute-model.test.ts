// The attribute editor's rows from the stored attributes and back to the merge PATCH: types kept, removals as null.
import { describe, expect, it } from 'vitest';
import { attributesPatch, parseValue, retype, rowsFromAttributes, type AttributeRow } from './attribute-model';

const stored = { name: 'Ada', seats: 3, trial: true, plan: { tier: 'pro' } };

describe('rowsFromAttributes', () => {
  it('keeps each value with its type', () => {
    expect(rowsFromAttributes(stored).map(({ key, type, value }) => [key, type, value])).toEqual([
      ['name', 'string', 'Ada'],
      ['seats', 'number', '3'],
      ['trial', 'boolean', 'true'],
      ['plan', 'json', '{"tier":"pro"}'],
    ]);
  });
});

describe('attributesPatch', () => {
  it('sends nothing when nothing changed', () => {
    expect(attributesPatch(stored, rowsFromAttributes(stored))).toEqual({ patch: {} });
  });

  it('sends changed and new keys typed, and removed or renamed keys as null', () => {
    const rows = rowsFromAttributes(stored);
    const edited: AttributeRow[] = [
      { ...rows[0]!, key: 'first_name' },
      { ...rows[1]!, value: '4.5' },
      { ...rows[2]!, value: 'false' },
      { id: 9, key: 'city', type: 'string', value: '42' },
    ];
    expect(attributesPatch(stored, edited)).toEqual({ patch: { first_name: 'Ada', seats: 4.5, trial: false, city: '42', name: null, plan: null } });
  });

  it('says in words what is wrong with each row, and sends nothing', () => {
    const rows: AttributeRow[] = [
      { id: 1, key: ' ', type: 'string', value: 'x' },
      { id: 2, key: 'seats', type: 'number', value: 'many' },
      { id: 3, key: 'seats', type: 'string', value: 'x' },
      { id: 4, key: 'plan', type: 'json', value: '{' },
    ];
    const result = attributesPatch(stored, rows);
    expect('errors' in result && Object.fromEntries(result.errors)).toEqual({
      1: { key: 'Enter a name for this attribute.' },
      2: { value: 'Enter a number, such as 42 or 3.5.' },
      3: { key: 'Another attribute already has this name.' },
      4: { value: 'Enter valid JSON, such as {"plan": "pro"} or [1, 2].' },
    });
  });
});

describe('types', () => {
  it('reads numbers, yes/no and JSON, and converts a value when its type changes', () => {
    expect(parseValue({ type: 'number', value: ' -2e3 ' })).toEqual({ value: -2000 });
    expect(parseValue({ type: 'number', value: '' })).toHaveProperty('error');
    expect(parseValue({ type: 'boolean', value: 'false' })).toEqual({ value: false });
    expect(parseValue({ type: 'json', value: 'null' })).toHaveProperty('error');
    const row: AttributeRow = { id: 1, key: 'k', type: 'string', value: '12' };
    expect(retype(row, 'number').value).toBe('12');
    expect(retype(row, 'boolean').value).toBe('false');
    expect(retype(row, 'json').value).toBe('"12"');
    expect(retype({ ...row, value: 'abc' }, 'number').value).toBe('');
  });
});
