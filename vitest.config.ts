// Vitest: every workspace's tests (the dashboard's run in Chromium), one PostgreSQL for the run (see server/test/global-setup.ts).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['server/**/*.test.ts', 'dashboard/**/*.test.ts', 'clients/**/*.test.ts', 'sdk/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    globalSetup: ['server/test/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A poll waits on something that must happen; on a loaded 2-core CI machine Chromium or a worker can take seconds.
    expect: { poll: { timeout: 10_000 } },
  },
});
