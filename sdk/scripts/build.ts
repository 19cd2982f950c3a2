// Builds the SDK: an ES module, a script-tag build and the service worker, each also under dist/<version>/ (served
// with a long cache), and checks the script build against its budget (< 8 KB gzipped).
import { copyFile, mkdir, readFile, rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { build, type BuildOptions, type Format } from 'esbuild';

const BUDGET_BYTES = 8 * 1024;
const root = new URL('..', import.meta.url);
const { version } = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as { version: string };
const dist = new URL('dist/', root);

await rm(dist, { recursive: true, force: true });
const common: BuildOptions = {
  bundle: true,
  minify: true,
  target: ['es2020', 'chrome80', 'firefox78', 'safari16'],
  // @herald/client's retry policy and error type, from its TypeScript source.
  conditions: ['source'],
  absWorkingDir: new URL('.', root).pathname,
  logLevel: 'warning',
};
const outputs: { entry: string; file: string; format: Format }[] = [
  { entry: 'src/index.ts', file: 'herald.mjs', format: 'esm' },
  { entry: 'src/script.ts', file: 'herald.js', format: 'iife' },
  { entry: 'src/sw/herald-sw.ts', file: 'herald-sw.js', format: 'iife' },
];
await Promise.all(outputs.map(({ entry, file, format }) => build({ ...common, entryPoints: [entry], outfile: `dist/${file}`, format })));

await mkdir(new URL(`${version}/`, dist));
let overBudget = false;
for (const { file } of outputs) {
  await copyFile(new URL(file, dist), new URL(`${version}/${file}`, dist));
  const gzipped = gzipSync(await readFile(new URL(file, dist)), { level: 9 }).length;
  const budget = file === 'herald.js' ? ` (budget ${(BUDGET_BYTES / 1024).toFixed(1)} KB)` : '';
  console.log(`  sdk/dist/${file.padEnd(13)} ${(gzipped / 1024).toFixed(2)} KB gzipped${budget}`);
  if (file === 'herald.js' && gzipped > BUDGET_BYTES) overBudget = true;
}
if (overBudget) {
  console.error('The script build is over its 8 KB budget: see docs/SDK.md "Size"');
  process.exit(1);
}
