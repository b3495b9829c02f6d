/**
 * The house keeps its arrows pointing one way (DESIGN §7 "Keep the house acyclic", §8 "Ports
 * belong to their consumer"), read from the import statements of `src/` and `drivers/`:
 *
 * - the tag store, the DBC decoder and the API never import a driver: an interface they need
 *   from drivers (the write port) is declared on their side and drivers implement it, and the
 *   API reaches drivers only through the writer, the profile and the driver reports;
 * - the metrics import of `drivers/` and `src/api/` only the ports they implement
 *   (`DriverMetrics`, `ApiMetrics`): what they read at a scrape comes from the components;
 * - `src/dbc/` is pure: it imports nothing but itself and the error classes;
 * - no import cycle, type-only imports included (a type cycle is still two files that cannot be
 *   understood, tested or moved apart).
 *
 * Every kind of import counts: `import`, `import type`, `export … from`, `import()` and
 * `import('…')` types.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import ts from 'typescript';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Source files under a folder, relative to the repository root with `/` separators. */
function sourceFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .map((name) => posix.join(folder, name.split('\\').join('/')))
    .filter((name) => /\.tsx?$/.test(name) && !name.endsWith('.d.ts'))
    .sort();
}

/** Every module specifier a source text names, whatever the kind of import. */
function specifiers(file: string, text: string): string[] {
  const kind = file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push(node.moduleReference.expression.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

interface ImportGraph {
  /** Per file, the project files it imports (relative imports only: packages are not ours). */
  edges: Map<string, string[]>;
  /** Relative specifiers that name no source file: the scan would miss an arrow. */
  unresolved: string[];
}

/**
 * Resolves a relative specifier the way the two programs do: NodeNext (`./x.js` is `./x.ts`)
 * for the daemon, bundler resolution (`./x` is `./x.ts` or `./x.tsx`) for the browser console.
 */
function resolveSpecifier(from: string, specifier: string, known: Set<string>): string | undefined {
  const target = posix.normalize(posix.join(posix.dirname(from), specifier));
  const stem = target.replace(/\.(?:js|jsx|ts|tsx)$/, '');
  for (const candidate of [`${stem}.ts`, `${stem}.tsx`, `${target}/index.ts`]) {
    if (known.has(candidate)) return candidate;
  }
  return undefined;
}

function importGraph(): ImportGraph {
  const files = [...sourceFiles('src'), ...sourceFiles('drivers')];
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const file of files) {
    const targets = new Set<string>();
    for (const specifier of specifiers(file, readFileSync(join(root, file), 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = resolveSpecifier(file, specifier, known);
      if (target !== undefined) targets.add(target);
      // A data file (JSON) is no module of ours; anything else unresolved is a scanner gap.
      else if (!existsSync(join(root, dirname(file), specifier))) {
        unresolved.push(`${file}: '${specifier}'`);
      }
    }
    edges.set(file, [...targets].sort());
  }
  return { edges, unresolved };
}

const graph = importGraph();

/** `file → target` for each import of a file matching `from` whose target matches `to`. */
function arrows(from: (file: string) => boolean, to: (target: string) => boolean): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph.edges) {
    if (!from(file)) continue;
    for (const target of targets) if (to(target)) found.push(`${file} → ${target}`);
  }
  return found;
}

const under = (folder: string) => (file: string) => file.startsWith(`${folder}/`);

/** The import cycles: one closed path per strongly connected group of files (Tarjan). */
function cycles(edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let next = 0;
  const connect = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of edges.get(file) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) as number, index.get(target) as number));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || (edges.get(file) ?? []).includes(file)) groups.push(group.sort());
  };
  for (const file of edges.keys()) if (!index.has(file)) connect(file);
  return groups.map((group) => closedPath(group, edges));
}

/** A shortest path from the group's first file back to itself, inside the group. */
function closedPath(group: readonly string[], edges: Map<string, string[]>): string[] {
  const start = group[0] as string;
  const members = new Set(group);
  const previous = new Map<string, string>();
  const queue = [start];
  for (let at = 0; at < queue.length; at += 1) {
    const file = queue[at] as string;
    for (const target of edges.get(file) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [file];
        while (path[0] !== start) path.unshift(previous.get(path[0] as string) as string);
        return [...path, start];
      }
      if (!previous.has(target)) {
        previous.set(target, file);
        queue.push(target);
      }
    }
  }
  return [...group];
}

test('the scanner reads every kind of import', (t) => {
  const text = [
    "import { a } from './value.js';",
    "import type { B } from './type-only.js';",
    "import { type C, d } from './mixed.js';",
    "import './side-effect.js';",
    "import * as e from './namespace.js';",
    "import f = require('./require.js');",
    "export { g } from './re-export.js';",
    "export type { H } from './type-re-export.js';",
    "export * from './star.js';",
    "const i = await import('./dynamic.js');",
    "let j: import('./import-type.js').J;",
    "const k = 'import(\"./in-a-string.js\")'; // import('./in-a-comment.js')",
  ].join('\n');
  t.deepEqual(specifiers('example.ts', text), [
    './value.js',
    './type-only.js',
    './mixed.js',
    './side-effect.js',
    './namespace.js',
    './require.js',
    './re-export.js',
    './type-re-export.js',
    './star.js',
    './dynamic.js',
    './import-type.js',
  ]);
});

test('the scan resolves every relative import of src/ and drivers/', (t) => {
  t.deepEqual(graph.unresolved, [], 'relative imports that name no source file');
  const has = (file: string, target: string) => graph.edges.get(file)?.includes(target) === true;
  // A type-only import, and a dynamic import() (the registry's lazy loaders).
  t.true(has('drivers/driver.ts', 'src/clock.ts'));
  t.true(has('drivers/registry.ts', 'drivers/opcua/index.ts'));
  // Extensionless imports of the browser console (bundler resolution), .tsx included.
  t.true(has('src/console/web/main.tsx', 'src/console/web/app.tsx'));
  t.true(graph.edges.size > 200, `only ${graph.edges.size} files scanned`);
});

test('the tag store, the DBC decoder and the API import no driver', (t) => {
  const offenders = arrows(
    (file) => ['src/tags', 'src/dbc', 'src/api'].some((folder) => under(folder)(file)),
    under('drivers'),
  );
  t.deepEqual(
    offenders,
    [],
    `declare the port on the consumer's side (src/tags/tag-write-port.ts) and let drivers implement it:\n${offenders.join('\n')}`,
  );
});

test('the metrics import of drivers/ and src/api/ only the ports they implement', (t) => {
  // DriverMetrics (drivers/driver.ts) and ApiMetrics (src/api/api-deps.ts) are declared by the
  // parts that report through them; what the metrics read at a scrape comes from the
  // components themselves, not from the API's view of them.
  const ports = new Set(['drivers/driver.ts', 'src/api/api-deps.ts']);
  const offenders = arrows(
    under('src/metrics'),
    (target) => (under('drivers')(target) || under('src/api')(target)) && !ports.has(target),
  );
  t.deepEqual(
    offenders,
    [],
    `read the components (src/runtime/driver-reports.ts for drivers), not the API:\n${offenders.join('\n')}`,
  );
});

test('src/dbc/ is pure: it imports nothing but itself and the error classes', (t) => {
  const offenders = arrows(
    under('src/dbc'),
    (target) => !under('src/dbc')(target) && target !== 'src/errors.ts',
  );
  // The error classes stay a leaf, so the decoder's closure stays within src/dbc/.
  offenders.push(
    ...arrows(
      (file) => file === 'src/errors.ts',
      () => true,
    ),
  );
  t.deepEqual(
    offenders,
    [],
    `what needs the tags (the signal catalog) lives with the tags:\n${offenders.join('\n')}`,
  );
});

test('src/ and drivers/ have no import cycle, type-only imports included', (t) => {
  const found = cycles(graph.edges).map((path) => path.join(' → '));
  t.deepEqual(
    found,
    [],
    `move the shared types into a module of their own (DESIGN §7):\n${found.join('\n')}`,
  );
});

test('the cycle finder names a cycle, type-only or not, and passes a chain', (t) => {
  const edges = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts', 'd.ts']],
    ['d.ts', []],
    ['e.ts', ['e.ts']],
  ]);
  t.deepEqual(cycles(edges), [
    ['a.ts', 'b.ts', 'c.ts', 'a.ts'],
    ['e.ts', 'e.ts'],
  ]);
  t.deepEqual(
    cycles(
      new Map([
        ['a.ts', ['b.ts']],
        ['b.ts', []],
      ]),
    ),
    [],
  );
});
