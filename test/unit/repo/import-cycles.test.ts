/**
 * No import cycles in src/, type-only imports included. ESLint's `import-x/no-cycle` guards runtime cycles on every
 * edit, but it skips `import type` edges; a cycle through types still ties two files together, so this walks every
 * relative import and export-from of src/ and fails on any cycle, naming it.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

import { sourceFiles } from './source-files.js';

const SRC = resolve(import.meta.dirname, '../../../src');

/** Relative module specifiers of `import … from`, `export … from` and side-effect imports. */
export function relativeImports(source: string): string[] {
  const specifiers: string[] = [];
  const pattern =
    /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+'(\.{1,2}\/[^']+)'|(?:^|\n)\s*import\s+'(\.{1,2}\/[^']+)'/g;
  for (const match of source.matchAll(pattern)) specifiers.push(match[1] ?? match[2] ?? '');
  return specifiers.filter((specifier) => specifier !== '');
}

/** Every cycle of the graph, each once (as found by a depth-first walk from the files in name order). */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (state.get(next) === undefined) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (state.get(file) === undefined) visit(file);
  return cycles;
}

describe('import cycles', () => {
  it('finds a cycle through type imports (the check itself works)', () => {
    const graph = new Map([
      [
        'a.ts',
        relativeImports("import type { B } from './b.js';").map((s) => s.replace('./', '').replace('.js', '.ts')),
      ],
      [
        'b.ts',
        relativeImports("import { a } from './a.js';\nexport * from './c.js';").map((s) =>
          s.replace('./', '').replace('.js', '.ts'),
        ),
      ],
      ['c.ts', []],
    ]);
    assert.deepEqual(findCycles(graph), [['a.ts', 'b.ts', 'a.ts']]);
  });

  it('src/ has none, type-only imports included', async () => {
    const files = await sourceFiles(SRC);
    const graph = new Map<string, string[]>();
    for (const file of files) {
      const targets = relativeImports(await readFile(file, 'utf8')).map((specifier) =>
        relative(SRC, resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))),
      );
      graph.set(relative(SRC, file), [...new Set(targets)].sort());
    }
    assert.ok(graph.size > 100, `read ${graph.size} files`);
    const cycles = findCycles(graph);
    assert.deepEqual(
      cycles.map((cycle) => cycle.join(' → ')),
      [],
      'import cycles in src/',
    );
  });

  it('the node pass imports only down its floors (memory → act → tell → pass → the gate)', async () => {
    const NODE = join(SRC, 'workflows/node');
    const floors = ['memory', 'act', 'tell', 'pass'];
    // A file directly in node/ (the gate) sits above every floor.
    const floorOf = (file: string): number => {
      const [first, ...rest] = relative(NODE, file).split('/');
      return rest.length === 0 ? floors.length : floors.indexOf(first ?? '');
    };
    const files = await sourceFiles(NODE);
    const upward: string[] = [];
    for (const file of files) {
      assert.notEqual(floorOf(file), -1, `${relative(SRC, file)} is on no floor`);
      for (const specifier of relativeImports(await readFile(file, 'utf8'))) {
        const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
        if (relative(NODE, target).startsWith('..')) continue;
        if (floorOf(target) > floorOf(file)) upward.push(`${relative(NODE, file)} → ${relative(NODE, target)}`);
      }
    }
    assert.ok(files.length > 20, `read ${files.length} files`);
    assert.deepEqual(upward, [], 'imports up a floor in src/workflows/node');
  });
});
