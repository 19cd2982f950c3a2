// Liveness and readiness for orchestrators: public, and they reveal nothing but up and ready.
import type { Pool } from 'pg';
import { z } from 'zod';
import { pendingMigrations } from '../db/database.js';
import { AppError } from '../shared/errors.js';
import { errorEnvelope } from '../http/schemas.js';
import type { App } from '../http/types.js';

const open = { access: { auth: 'public' }, rateLimit: false } as const;

export async function healthRoutes(app: App, pool: Pool) {
  app.get(
    '/healthz',
    {
      config: open,
      schema: { tags: ['Operations'], summary: 'Liveness: the process answers', response: { 200: z.object({ status: z.literal('ok') }) } },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: open,
      schema: {
        tags: ['Operations'],
        summary: 'Readiness: the database answers and its migrations are current',
        response: { 200: z.object({ status: z.literal('ready') }), 503: errorEnvelope },
      },
    },
    async () => {
      let pending: number;
      try {
        pending = await pendingMigrations(pool);
      } catch {
        throw new AppError(503, 'database_unavailable', 'Database unreachable');
      }
      if (pending > 0) throw new AppError(503, 'migrations_pending', `${pending} database migration(s) pending`);
      return { status: 'ready' as const };
    },
  );
}
