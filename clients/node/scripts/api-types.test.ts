// The committed client types are those of the server's current routes: a route change without `npm run generate` fails.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { heraldApiTypes } from './api-types.js';

describe('src/generated/herald-api.ts', () => {
  it('matches what openapi-typescript makes of the current OpenAPI document (run `npm run generate -w clients/node`)', async () => {
    const committed = await readFile(new URL('../src/generated/herald-api.ts', import.meta.url), 'utf8');
    expect(committed === (await heraldApiTypes())).toBe(true);
  });
});
