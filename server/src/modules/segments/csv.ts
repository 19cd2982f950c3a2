// CSV cells that a spreadsheet would run as a formula are neutralised with a leading apostrophe.
const FORMULA_START = /^[=+\-@\t\r\0]/;

export function escapeCell(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  return FORMULA_START.test(value) ? `'${value}` : value;
}
