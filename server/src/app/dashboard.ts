// Serves the built dashboard (dashboard/dist) under /app/: hashed assets cached for a year, index.html revalidated,
// client-side routes answered with index.html, `/` redirected to /app/, and a strict Content-Security-Policy.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { App } from '../http/types.js';

/** dashboard/dist beside server/, the same from server/src/http (tests) and server/dist/http (the built CLI). */
export const DASHBOARD_DIST = fileURLToPath(new URL('../../../dashboard/dist/', import.meta.url));

/**
 * Only this origin's scripts and API; images also from https: (notification icons and images in previews). No inline
 * script, no eval, no framing, no plugins. Inline styles are allowed: Radix's modal dialogs lock the page's scroll with
 * a <style> element whose content varies (the scrollbar's width), so neither a hash nor a static nonce can name it.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: https:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const access = { auth: 'public' } as const;
// Client-side routes carry their own search parameters (filters, pages): whatever the query, index.html answers.
const anyQuery = z.looseObject({});
const schema = { hide: true, querystring: anyQuery };

function secured(reply: FastifyReply) {
  return reply
    .header('content-security-policy', DASHBOARD_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer');
}

export async function dashboardRoutes(app: App, root: string = DASHBOARD_DIST) {
  const built = existsSync(`${root}/index.html`);
  if (!built) app.log.warn({ root }, 'the dashboard is not built (npm run build): /app/ answers 404');

  app.get('/', { config: { access }, schema }, (_request, reply) => reply.redirect('/app/', 302));
  app.get('/app', { config: { access }, schema }, (_request, reply) => reply.redirect('/app/', 301));

  // Vite names every asset by its content's hash: a changed file is a new URL, so an old one never goes stale.
  app.get('/app/assets/*', { config: { access }, schema }, (request, reply) => {
    const file = (request.params as { '*': string })['*'];
    return secured(reply).sendFile(`assets/${file}`, root, { maxAge: '365d', immutable: true });
  });

  app.get('/app/*', { config: { access }, schema }, (_request, reply) => {
    if (!built) return reply.callNotFound();
    // no-cache: revalidated (ETag) on every load, so a new build's asset names are seen at once.
    return secured(reply).header('cache-control', 'no-cache').sendFile('index.html', root, { cacheControl: false });
  });
}
