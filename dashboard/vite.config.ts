// Vite: the dashboard is served by Herald under /app/; assets get content hashes so they can be cached for a year.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/app/',
  plugins: [react()],
  build: { outDir: 'dist', assetsDir: 'assets', emptyOutDir: true, sourcemap: false },
  server: {
    // `npx vite` in dashboard/ during development: the API of a `herald serve` on port 3000.
    proxy: Object.fromEntries(
      ['/auth', '/organizations', '/members', '/projects', '/subscribers', '/segments', '/campaigns', '/contacts', '/transactional'].map(
        (path) => [path, 'http://localhost:3000'],
      ),
    ),
  },
});
