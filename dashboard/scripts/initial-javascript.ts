// The JavaScript the login page loads first (the entry and its modulepreloads) and the chunks left to load lazily, gzipped.
import { readdir, readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';

export const BUDGET_KB = 250;

export interface InitialJavaScript {
  /** The entry and its static imports, each gzipped at level 9. */
  initial: { file: string; gzipBytes: number }[];
  total: number;
  /** The other chunks (lazy routes and editors), gzipped, together. */
  lazyBytes: number;
  lazyFiles: number;
}

/** Reads a built dashboard (`dist` as Vite writes it). */
export async function initialJavaScript(dist: URL): Promise<InitialJavaScript> {
  const html = await readFile(new URL('index.html', dist), 'utf8');
  // Vite writes the entry as <script type="module" src> and its static imports as <link rel="modulepreload" href>.
  const files = [...html.matchAll(/<(?:script[^>]+src|link[^>]+rel="modulepreload"[^>]+href)="\/app\/([^"]+\.js)"/g)].map((match) => match[1]!);
  const gzipped = async (file: string) => gzipSync(await readFile(new URL(file, dist)), { level: 9 }).length;
  const initial = await Promise.all(files.map(async (file) => ({ file, gzipBytes: await gzipped(file) })));
  const lazy = (await readdir(new URL('assets/', dist))).map((name) => `assets/${name}`).filter((file) => file.endsWith('.js') && !files.includes(file));
  const lazyBytes = (await Promise.all(lazy.map(gzipped))).reduce((sum, n) => sum + n, 0);
  return { initial, total: initial.reduce((sum, f) => sum + f.gzipBytes, 0), lazyBytes, lazyFiles: lazy.length };
}
