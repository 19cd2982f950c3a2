// Prints the gzipped size of the JavaScript the login page loads first (entry + modulepreloads) and fails over budget.
import { BUDGET_KB, initialJavaScript } from './initial-javascript.js';

const { initial, total } = await initialJavaScript(new URL('../dist/', import.meta.url));
for (const { file, gzipBytes } of initial) console.log(`  ${file}  ${(gzipBytes / 1024).toFixed(1)} KB gzipped`);
const line = `initial JavaScript: ${(total / 1024).toFixed(1)} KB gzipped (budget ${BUDGET_KB} KB, ${initial.length} file(s))`;
if (initial.length === 0 || total > BUDGET_KB * 1024) {
  console.error(`bundle budget exceeded or no entry found: ${line}`);
  process.exit(1);
}
console.log(line);
