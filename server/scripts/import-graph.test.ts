// The import-graph script run as CI runs it, on small trees: face bypasses and cycles found, a clean tree passes --check.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('./import-graph.ts', import.meta.url));
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const trees: string[] = [];

async function tree(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'herald-import-graph-'));
  trees.push(root);
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text);
  }
  return root;
}

function run(root: string, check: boolean): Promise<{ code: number; stdout: string; stderr: string }> {
  const args = ['--import', 'tsx', script, '--root', root, ...(check ? ['--check'] : [])];
  return new Promise((resolve) => {
    const child = execFile(process.execPath, args, { cwd: repoRoot }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
    child.stdin?.end();
  });
}

afterEach(async () => {
  await Promise.all(trees.splice(0).map((root) => rm(root, { recursive: true, force: true })));
});

describe('import-graph script', () => {
  it('lists a bypass of a face, a repository import and the module and file cycles, and --check fails on them', async () => {
    const root = await tree({
      'services.ts': "import { listOrders } from './modules/orders/order.service.js';\nexport const services = { listOrders };\n",
      'modules/orders/index.ts': "export { listOrders } from './order.service.js';\n",
      'modules/orders/order.service.ts':
        "import { findPerson } from '../people/person.repository.js';\nimport type { Person } from '../people/index.js';\n" +
        'export const listOrders = (p: Person) => findPerson(p);\n',
      'modules/orders/order.repository.ts': "import type { Person } from '../people/index.js';\nexport const ORDERS: Person = '1';\n",
      'modules/people/index.ts': "export type Person = string;\nexport * from './person.repository.js';\n",
      'modules/people/person.repository.ts':
        "export const findPerson = async (p: string) => (await import('../orders/order.repository.js')).ORDERS + p;\n",
      'modules/people/person.test.ts': "import '../orders/order.repository.js';\n",
    });

    const report = await run(root, false);
    expect(report.code).toBe(0);
    expect(report.stdout).toContain('Face bypasses: 3 (2 from modules, 1 from the other areas)');
    expect(report.stdout).toContain('  orders → people: 1\n    modules/orders/order.service.ts → modules/people/person.repository.ts\n');
    // A dynamic import() is an import like any other; the test file's is not counted.
    expect(report.stdout).toContain('  people → orders: 1\n    modules/people/person.repository.ts → modules/orders/order.repository.ts\n');
    expect(report.stdout).toContain('From composition root: 1 imports across 1 pairs\n');
    expect(report.stdout).toContain("Imports of another module's repository: 2 imports across 2 pairs\n");
    expect(report.stdout).toContain('Module cycles: 1\n  {orders, people}\n    orders → people → orders\n');
    expect(report.stdout).toContain(
      'File cycles: 1\n  {modules/orders/order.repository.ts, modules/people/index.ts, modules/people/person.repository.ts}\n' +
        '    modules/orders/order.repository.ts → modules/people/index.ts → modules/people/person.repository.ts → modules/orders/order.repository.ts\n',
    );

    expect((await run(root, true)).code).toBe(1);
  });

  it('counts a type-only import as a bypass and says it is one', async () => {
    const root = await tree({
      'modules/orders/order.service.ts': "import type { Person } from '../people/person.service.js';\nexport const name = (p: Person) => p;\n",
      'modules/people/person.service.ts': 'export type Person = string;\n',
    });

    const report = await run(root, true);
    expect(report.stdout).toContain('From modules into another module: 1 imports across 1 pairs, 1 type-only\n');
    expect(report.stdout).toContain('modules/orders/order.service.ts → modules/people/person.service.ts (type)');
    expect(report.code).toBe(1);
  });

  it('finds the cycle an HTTP kit closes when it is also the app: modules import it, it imports them', async () => {
    const root = await tree({
      'http/schemas.ts': "export const id = 'id';\n",
      'http/app.ts': "import { orderRoutes } from '../modules/orders/index.js';\nexport const app = [orderRoutes];\n",
      'modules/orders/index.ts': "export { orderRoutes } from './order.routes.js';\n",
      'modules/orders/order.routes.ts': "import { id } from '../../http/schemas.js';\nexport const orderRoutes = id;\n",
    });

    const report = await run(root, true);
    expect(report.stdout).toContain('Face bypasses: 0 ');
    expect(report.stdout).toContain('Module cycles: 0\n');
    expect(report.stdout).toContain('Cycles through an area (http, jobs, …): 1\n  {http, orders}\n    http → orders → http\n');
    expect(report.stdout).toContain('File cycles: 0\n');
    expect(report.code).toBe(1);
  });

  it('passes --check on a tree whose modules meet only at their faces, without cycles', async () => {
    const root = await tree({
      'services.ts': "import { listOrders } from './modules/orders/index.js';\nimport { send } from './delivery/index.js';\nexport const s = { listOrders, send };\n",
      'shared/errors.ts': 'export class AppError extends Error {}\n',
      'modules/orders/index.ts': "export { listOrders } from './order.service.js';\n",
      'modules/orders/order.service.ts':
        "import { findPerson } from '../people/index.js';\nimport { AppError } from '../../shared/errors.js';\n" +
        'export const listOrders = () => { if (!findPerson) throw new AppError(); };\n',
      'modules/people/index.ts': "export { findPerson } from './person.repository.js';\n",
      'modules/people/person.repository.ts': "import { send } from '../../delivery/index.js';\nexport const findPerson = send;\n",
      'delivery/index.ts': "export { send } from './delivery-engine.js';\n",
      'delivery/delivery-engine.ts': 'export const send = () => 1;\n',
    });

    const report = await run(root, true);
    expect(report.stdout).toContain('Face bypasses: 0 (0 from modules, 0 from the other areas)');
    expect(report.stdout).toContain('Module cycles: 0\n');
    expect(report.stdout).toContain('Cycles through an area (http, jobs, …): 0\n');
    expect(report.stdout).toContain('File cycles: 0\n');
    expect(report.code).toBe(0);
  });

  it('refuses a root that is not a directory, with its usage, rather than reporting an empty graph', async () => {
    const missing = path.join(tmpdir(), 'herald-import-graph-missing');
    const report = await run(missing, true);
    expect(report.code).toBe(2);
    expect(report.stderr).toContain(`import-graph: ${missing} is not a directory`);
    expect(report.stdout).toBe('');
  });
});
