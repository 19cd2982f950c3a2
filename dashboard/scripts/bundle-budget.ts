// Prints the gzipped size of the JavaScript the login page loads first (entry + modulepreloads) and fails over budget.
import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';

const BUDGET_KB = 250;
const dist = new URL('../dist/', import.meta.url);
const html = await readFile(new URL('index.html', dist), 'utf8');
// Vite writes the entry as <script type="module" src> and its static imports as <link rel="modulepreload" href>.
const initial = [...html.matchAll(/<(?:script[^>]+src|link[^>]+rel="modulepreload"[^>]+href)="\/app\/([^"]+\.js)"/g)].map((match) => match[1]!);
let total = 0;
for (const file of initial) {
  const size = gzipSync(await readFile(new URL(file, dist)), { level: 9 }).length;
  total += size;
  console.log(`  ${file}  ${(size / 1024).toFixed(1)} KB gzipped`);
}
const line = `initial JavaScript: ${(total / 1024).toFixed(1)} KB gzipped (budget ${BUDGET_KB} KB, ${initial.length} file(s))`;
if (initial.length === 0 || total > BUDGET_KB * 1024) {
  console.error(`bundle budget exceeded or no entry found: ${line}`);
  process.exit(1);
}
console.log(line);
