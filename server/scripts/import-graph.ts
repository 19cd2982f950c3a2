// The import graph of server/src: imports that bypass a module's face, imports of another module's repository, and cycles.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** One import of a file of the tree by another; `typeOnly` imports are counted too: they still couple the two modules. */
export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}

/**
 * Where a file belongs. A *module* is `modules/<name>/` or `delivery/`, reachable from outside only through its face;
 * every other part of the tree is an *area* (the composition root, the CLI, the HTTP app, jobs, db, shared …).
 */
export interface Place {
  name: string;
  kind: 'module' | 'area';
}

export interface ImportGraph {
  files: string[];
  edges: ImportEdge[];
}

export interface Report {
  bypasses: ImportEdge[];
  repositoryImports: ImportEdge[];
  moduleCycles: string[][];
  areaCycles: string[][];
  fileCycles: string[][];
}

export function placeOf(file: string): Place {
  const parts = file.split('/');
  if (parts[0] === 'modules' && parts.length > 2) return { name: parts[1]!, kind: 'module' };
  if (parts[0] === 'delivery') return { name: 'delivery', kind: 'module' };
  if (file === 'services.ts') return { name: 'composition root', kind: 'area' };
  if (parts[0] === 'cli' || file === 'main.ts' || file === 'runtime.ts') return { name: 'cli', kind: 'area' };
  if (parts.length === 1 || (parts[0] === 'modules' && parts.length === 2)) return { name: path.basename(file, '.ts'), kind: 'area' };
  return { name: parts[0]!, kind: 'area' };
}

export function isFace(file: string): boolean {
  const parts = file.split('/');
  const moduleRoot = parts[0] === 'modules' ? 2 : 1;
  return parts.length === moduleRoot + 1 && parts[moduleRoot] === 'index.ts';
}

function sourceFiles(root: string, dir = ''): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(path.join(root, dir)).sort()) {
    const relative = dir ? `${dir}/${entry}` : entry;
    if (statSync(path.join(root, relative)).isDirectory()) found.push(...sourceFiles(root, relative));
    // Tests reach inside the module they test; they are not part of the shipped graph.
    else if (/\.tsx?$/.test(entry) && !/\.test\.tsx?$/.test(entry) && !entry.endsWith('.d.ts')) found.push(relative);
  }
  return found;
}

function resolve(root: string, importer: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(importer), specifier));
  const bare = target.replace(/\.(m|c)?jsx?$/, '');
  for (const candidate of [`${bare}.ts`, `${bare}.tsx`, target, `${target}/index.ts`]) {
    if (candidate.startsWith('..')) return undefined;
    if (/\.tsx?$/.test(candidate) && existsSync(path.join(root, candidate))) return candidate;
  }
  return undefined;
}

function importsOf(fileName: string, text: string): { specifier: string; typeOnly: boolean }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const found: { specifier: string; typeOnly: boolean }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly)));
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly =
        node.isTypeOnly ||
        (node.exportClause !== undefined &&
          ts.isNamedExports(node.exportClause) &&
          node.exportClause.elements.length > 0 &&
          node.exportClause.elements.every((element) => element.isTypeOnly));
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push({ specifier: node.arguments[0].text, typeOnly: false });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Reads every non-test TypeScript file under `root`; a file imported both ways counts as one runtime edge. */
export function readImportGraph(root: string): ImportGraph {
  const files = sourceFiles(root);
  const edges = new Map<string, ImportEdge>();
  for (const file of files) {
    for (const { specifier, typeOnly } of importsOf(file, readFileSync(path.join(root, file), 'utf8'))) {
      const to = resolve(root, file, specifier);
      if (to === undefined || to === file) continue;
      const key = `${file}\0${to}`;
      const known = edges.get(key);
      edges.set(key, { from: file, to, typeOnly: (known?.typeOnly ?? true) && typeOnly });
    }
  }
  return { files, edges: [...edges.values()] };
}

/** Strongly connected components of more than one node (Tarjan), each in a stable order. */
export function cyclesOf(nodes: string[], next: Map<string, Set<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const node of [...nodes].sort()) if (!index.has(node)) connect(node);
  return components.sort((a, b) => b.length - a.length || a[0]!.localeCompare(b[0]!));
}

/** The shortest cycle through each member of a component, without repeats: a readable set of chains covering it. */
export function chainsOf(component: string[], next: Map<string, Set<string>>): string[][] {
  const inside = new Set(component);
  const seen = new Set<string>();
  const chains: string[][] = [];
  for (const start of component) {
    const parent = new Map<string, string>();
    const queue = [start];
    let closing: string | undefined;
    for (let at = 0; at < queue.length && closing === undefined; at++) {
      const node = queue[at]!;
      for (const to of [...(next.get(node) ?? [])].sort()) {
        if (!inside.has(to)) continue;
        if (to === start) {
          closing = node;
          break;
        }
        if (!parent.has(to)) {
          parent.set(to, node);
          queue.push(to);
        }
      }
    }
    if (closing === undefined) continue;
    const chain = [closing];
    while (chain[0] !== start) chain.unshift(parent.get(chain[0]!)!);
    const smallest = chain.indexOf([...chain].sort()[0]!);
    const canonical = [...chain.slice(smallest), ...chain.slice(0, smallest)];
    if (seen.has(canonical.join('\0'))) continue;
    seen.add(canonical.join('\0'));
    chains.push(canonical);
  }
  return chains;
}

function adjacency(edges: Iterable<[string, string]>): Map<string, Set<string>> {
  const next = new Map<string, Set<string>>();
  for (const [from, to] of edges) {
    if (from === to) continue;
    if (!next.has(from)) next.set(from, new Set());
    next.get(from)!.add(to);
  }
  return next;
}

export function moduleGraph(graph: ImportGraph, withAreas: boolean): Map<string, Set<string>> {
  const pairs: [string, string][] = [];
  for (const edge of graph.edges) {
    const from = placeOf(edge.from);
    const to = placeOf(edge.to);
    if (withAreas || (from.kind === 'module' && to.kind === 'module')) pairs.push([from.name, to.name]);
  }
  return adjacency(pairs);
}

export function fileGraph(graph: ImportGraph): Map<string, Set<string>> {
  return adjacency(graph.edges.map((edge): [string, string] => [edge.from, edge.to]));
}

export function analyse(graph: ImportGraph): Report {
  const crossing = graph.edges.filter((edge) => {
    const to = placeOf(edge.to);
    return to.kind === 'module' && placeOf(edge.from).name !== to.name;
  });
  const modules = moduleGraph(graph, false);
  const withAreas = moduleGraph(graph, true);
  const moduleCycles = cyclesOf([...modules.keys()], modules);
  const inModuleCycles = new Set(moduleCycles.map((cycle) => cycle.join('\0')));
  return {
    bypasses: crossing.filter((edge) => !isFace(edge.to)),
    repositoryImports: crossing.filter((edge) => edge.to.endsWith('.repository.ts')),
    moduleCycles,
    // Cycles that exist only once the areas (http, jobs …) are nodes too: the ones a module closes through them.
    areaCycles: cyclesOf([...withAreas.keys()], withAreas).filter((cycle) => !inModuleCycles.has(cycle.join('\0'))),
    fileCycles: cyclesOf(graph.files, fileGraph(graph)),
  };
}

function typeNote(edges: ImportEdge[]): string {
  const typeOnly = edges.filter((edge) => edge.typeOnly).length;
  return typeOnly ? `, ${typeOnly} type-only` : '';
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const name = key(item);
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name)!.push(item);
  }
  return new Map([...groups].sort(([a, x], [b, y]) => y.length - x.length || a.localeCompare(b)));
}

function printEdges(lines: string[], title: string, edges: ImportEdge[]): void {
  const pairs = groupBy(edges, (edge) => `${placeOf(edge.from).name} → ${placeOf(edge.to).name}`);
  lines.push(`${title}: ${edges.length} imports across ${pairs.size} pairs${typeNote(edges)}`);
  for (const [pair, group] of pairs) {
    lines.push(`  ${pair}: ${group.length}${typeNote(group)}`);
    for (const edge of group) lines.push(`    ${edge.from} → ${edge.to}${edge.typeOnly ? ' (type)' : ''}`);
  }
}

function printCycles(
  lines: string[],
  title: string,
  cycles: string[][],
  next: Map<string, Set<string>>,
  shown: (chain: string[]) => boolean = () => true,
): void {
  lines.push(`${title}: ${cycles.length}`);
  for (const cycle of cycles) {
    lines.push(`  {${cycle.join(', ')}}`);
    for (const chain of chainsOf(cycle, next).filter(shown)) lines.push(`    ${[...chain, chain[0]].join(' → ')}`);
  }
}

/** The report as text: face bypasses by importing part (modules, then each area), repository imports, then cycles. */
export function formatReport(graph: ImportGraph, report: Report): string {
  const lines: string[] = [];
  const byImporter = groupBy(report.bypasses, (edge) => placeOf(edge.from).kind);
  const fromModules = byImporter.get('module') ?? [];
  const fromAreas = byImporter.get('area') ?? [];
  lines.push(`Face bypasses: ${report.bypasses.length} (${fromModules.length} from modules, ${fromAreas.length} from the other areas)`);
  printEdges(lines, '\nFrom modules into another module', fromModules);
  for (const [area, edges] of groupBy(fromAreas, (edge) => placeOf(edge.from).name)) {
    printEdges(lines, `\nFrom ${area}`, edges);
  }
  printEdges(lines, "\nImports of another module's repository", report.repositoryImports);
  lines.push('');
  printCycles(lines, 'Module cycles', report.moduleCycles, moduleGraph(graph, false));
  const modules = new Set(graph.files.filter((file) => placeOf(file).kind === 'module').map((file) => placeOf(file).name));
  const throughArea = (chain: string[]) => chain.some((name) => !modules.has(name));
  printCycles(lines, 'Cycles through an area (http, jobs, …)', report.areaCycles, moduleGraph(graph, true), throughArea);
  printCycles(lines, 'File cycles', report.fileCycles, fileGraph(graph));
  return `${lines.join('\n')}\n`;
}

const USAGE = 'usage: npm run imports [-- --check] [--root <directory>]  (default directory: server/src)\n';

function main(args: string[]): number {
  const rootArg = args.indexOf('--root');
  const unknown = args.filter((arg, i) => arg !== '--check' && arg !== '--root' && (rootArg < 0 || i !== rootArg + 1));
  const root = rootArg >= 0 ? args[rootArg + 1] : fileURLToPath(new URL('../src', import.meta.url));
  if (unknown.length > 0 || root === undefined || !existsSync(root) || !statSync(root).isDirectory()) {
    process.stderr.write(unknown.length > 0 || root === undefined ? USAGE : `import-graph: ${root} is not a directory\n${USAGE}`);
    return 2;
  }
  const graph = readImportGraph(root);
  const report = analyse(graph);
  process.stdout.write(formatReport(graph, report));
  const failing = report.bypasses.length + report.moduleCycles.length + report.areaCycles.length + report.fileCycles.length;
  return args.includes('--check') && failing > 0 ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
