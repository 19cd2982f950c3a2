// Regenerates src/generated/herald-api.ts, the client's types, from the server's OpenAPI document (npm run generate).
import { writeFile } from 'node:fs/promises';
import { heraldApiTypes } from './api-types.js';

const target = new URL('../src/generated/herald-api.ts', import.meta.url);
await writeFile(target, await heraldApiTypes());
console.error(`wrote ${target.pathname}`);
