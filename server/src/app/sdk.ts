// Serves the built browser SDK (sdk/dist) under /sdk/: stable URLs cached for an hour, versioned URLs for a year, and
// readable cross-origin (customers' pages import it as a module, their service workers with importScripts).
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { App } from '../http/types.js';

/** sdk/dist beside server/, the same from server/src/http (tests) and server/dist/http (the built CLI). */
const SDK_DIST = fileURLToPath(new URL('../../../sdk/dist/', import.meta.url));
const SDK_PACKAGE = fileURLToPath(new URL('../../../sdk/package.json', import.meta.url));

const FILES = new Set(['herald.js', 'herald.mjs', 'herald-sw.js']);
const access = { auth: 'public' } as const;

function crossOrigin(reply: FastifyReply) {
  return reply
    .header('access-control-allow-origin', '*')
    .header('cross-origin-resource-policy', 'cross-origin')
    .header('x-content-type-options', 'nosniff');
}

export async function sdkRoutes(app: App, root: string = SDK_DIST) {
  if (!existsSync(`${root}/herald.js`)) app.log.warn({ root }, 'the browser SDK is not built (npm run build): /sdk/ answers 404');
  const version = existsSync(SDK_PACKAGE) ? (JSON.parse(readFileSync(SDK_PACKAGE, 'utf8')) as { version: string }).version : undefined;

  // The latest build at a stable address: a new Herald's SDK reaches pages within the hour.
  app.get('/sdk/:file', { config: { access }, schema: { hide: true, params: z.object({ file: z.string() }) } }, (request, reply) => {
    if (!FILES.has(request.params.file)) return reply.callNotFound();
    return crossOrigin(reply).sendFile(request.params.file, root, { maxAge: '1h' });
  });

  // One version's files never change: pin one with /sdk/<version>/herald.js.
  app.get(
    '/sdk/:version/:file',
    { config: { access }, schema: { hide: true, params: z.object({ version: z.string(), file: z.string() }) } },
    (request, reply) => {
      if (request.params.version !== version || !FILES.has(request.params.file)) return reply.callNotFound();
      return crossOrigin(reply).sendFile(`${version}/${request.params.file}`, root, { maxAge: '365d', immutable: true });
    },
  );
}
