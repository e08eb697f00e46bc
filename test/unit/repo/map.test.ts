/**
 * The README's map of the code stays true: its table names every folder of src/ and every top-level folder of the
 * repository, each folder it names exists, and so does each file it tells a reader to start with; the src/ row
 * names every file directly in src/. Below src/workflows/node/ (the node pass) subfolders need no row of their own
 * and a file to start with may sit in any of them. Every other path the README's Architecture section and
 * docs/architecture.md name (in backticks or as a link) must exist too: a full path where it says, a bare file name
 * anywhere in the repository.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, posix, resolve } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../../..');

/** Not part of the repository's tree (build output, coverage, dependencies; see .gitignore). */
const NOT_SOURCE = new Set(['node_modules', 'dist', 'coverage', '.git', '.tmp']);

/** Folders whose subfolders the map describes as one (another change reorganises them; the row names the whole). */
const DESCRIBED_AS_ONE = ['src/workflows/node/'];

/** Files that name paths: a file whose extension is one of these, written bare, must exist somewhere. */
const FILE_NAME = /^[\w@.-]+\.(?:ts|mts|mjs|md|json|ya?ml|go|tpl)$/;

export interface Tree {
  /** Every folder, relative to the root, with a trailing slash. */
  dirs: ReadonlySet<string>;
  /** Every file, relative to the root. */
  files: ReadonlySet<string>;
}

export interface MapRow {
  folder: string;
  startWith: string[];
}

async function walk(dir: string, prefix: string, tree: { dirs: Set<string>; files: Set<string> }): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (NOT_SOURCE.has(entry.name)) continue;
    const path = `${prefix}${entry.name}`;
    if (entry.isDirectory()) {
      tree.dirs.add(`${path}/`);
      await walk(join(dir, entry.name), `${path}/`, tree);
    } else tree.files.add(path);
  }
}

async function repoTree(): Promise<Tree> {
  const tree = { dirs: new Set<string>(), files: new Set<string>() };
  await walk(ROOT, '', tree);
  return tree;
}

const backticked = (text: string): string[] => [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');

/** The text from a heading line to the next heading of the same or a higher level. */
export function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === heading);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = heading.indexOf(' ');
  const end = lines.findIndex((line, index) => index > start && /^#+ /.test(line) && line.indexOf(' ') <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The rows of the first table in `text` whose first cell is a backticked folder. */
export function mapRows(text: string): MapRow[] {
  const rows: MapRow[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) continue;
    const cells = line.split('|').map((cell) => cell.trim());
    const folder = /^`([^`]+\/)`$/.exec(cells[1] ?? '')?.[1];
    if (folder === undefined) continue;
    rows.push({ folder, startWith: backticked(cells[3] ?? '') });
  }
  return rows;
}

function describedAsOne(dir: string): string | undefined {
  return DESCRIBED_AS_ONE.find((whole) => dir.startsWith(whole) && dir !== whole);
}

/** What is wrong with the map against the tree: folders it misses, and names it gives that do not exist. */
export function mapProblems(rows: readonly MapRow[], tree: Tree): string[] {
  const problems: string[] = [];
  const mapped = new Set(rows.map((row) => row.folder));
  const topLevel = [...tree.dirs].filter((dir) => dir.split('/').length === 2 && !dir.startsWith('.'));
  const srcDirs = [...tree.dirs].filter((dir) => dir.startsWith('src/') && describedAsOne(dir) === undefined);
  for (const dir of [...new Set([...topLevel, 'src/', ...srcDirs])].sort()) {
    if (!mapped.has(dir)) problems.push(`${dir} has no row in the map`);
  }
  for (const row of rows) {
    if (!tree.dirs.has(row.folder)) {
      problems.push(`${row.folder} is in the map but does not exist`);
      continue;
    }
    const anyDepth = DESCRIBED_AS_ONE.includes(row.folder);
    for (const name of row.startWith) {
      const path = `${row.folder}${name}`;
      const found =
        tree.files.has(path) ||
        tree.dirs.has(path) ||
        (anyDepth && [...tree.files].some((file) => file.startsWith(row.folder) && file.endsWith(`/${name}`)));
      if (!found) problems.push(`${path} is in the map but does not exist`);
    }
  }
  const srcRow = rows.find((row) => row.folder === 'src/');
  for (const file of [...tree.files].filter((path) => /^src\/[^/]+\.ts$/.test(path)).sort()) {
    const name = file.slice('src/'.length);
    if (srcRow !== undefined && !srcRow.startWith.includes(name)) problems.push(`${file} is not named in the src/ row`);
  }
  return problems;
}

/**
 * Paths a text names that do not exist: backticked paths under a top-level folder, bare file names (found at any
 * depth), and relative link targets (from `base`, the folder of the text's file).
 */
export function missingPaths(text: string, base: string, tree: Tree): string[] {
  const missing: string[] = [];
  const topLevel = new Set([...tree.dirs].filter((dir) => dir.split('/').length === 2).map((dir) => dir.slice(0, -1)));
  const exists = (path: string): boolean =>
    tree.files.has(path) || tree.dirs.has(path.endsWith('/') ? path : `${path}/`);
  for (const token of backticked(text)) {
    if (/[\s<>*{}…=:]/.test(token)) continue;
    if (token.includes('/')) {
      if (topLevel.has(token.split('/')[0] ?? '') && !exists(token)) missing.push(token);
    } else if (FILE_NAME.test(token)) {
      if (![...tree.files].some((file) => file === token || file.endsWith(`/${token}`))) missing.push(token);
    }
  }
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = (match[1] ?? '').split('#')[0] ?? '';
    if (target === '' || /^[a-z]+:/.test(target)) continue;
    const path = posix.normalize(posix.join(base, target));
    if (!exists(path)) missing.push(`${target} (from ${base === '' ? 'the root' : base})`);
  }
  return missing;
}

describe('the map of the code', () => {
  const tiny: Tree = {
    dirs: new Set(['src/', 'src/a/', 'src/workflows/', 'src/workflows/node/', 'src/workflows/node/pass/', 'docs/']),
    files: new Set(['src/main.ts', 'src/a/x.ts', 'src/workflows/node/pass/ready.ts', 'docs/y.md']),
  };

  it('finds a folder with no row, a name that does not exist, and a file of src/ the src/ row leaves out', () => {
    const table = [
      '| folder | what | start with |',
      '| --- | --- | --- |',
      '| `src/` | entries | `other.ts` |',
      '| `src/workflows/` | orchestration | |',
      '| `src/workflows/node/` | the node pass | `ready.ts`, `gone.ts` |',
      '| `src/b/` | gone | `x.ts` |',
      '| `docs/` | docs | `y.md` |',
    ].join('\n');
    assert.deepEqual(mapProblems(mapRows(table), tiny), [
      'src/a/ has no row in the map',
      'src/other.ts is in the map but does not exist',
      'src/workflows/node/gone.ts is in the map but does not exist',
      'src/b/ is in the map but does not exist',
      'src/main.ts is not named in the src/ row',
    ]);
  });

  it('finds named paths and links that do not exist, a bare file name at any depth', () => {
    const text =
      'See `ready.ts`, `gone.ts`, `src/a/x.ts`, `src/a/z.ts`, `npm start`, `spec.pool`, [y](docs/y.md), [z](z.md).';
    assert.deepEqual(missingPaths(text, '', tiny), ['gone.ts', 'src/a/z.ts', 'z.md (from the root)']);
    assert.deepEqual(missingPaths('[up](../src/main.ts#top)', 'docs', tiny), []);
  });

  it("the README's map and docs/architecture.md match the repository", async () => {
    const tree = await repoTree();
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const architecture = section(readme, '## Architecture');
    const rows = mapRows(section(architecture, '### Map of the code'));
    assert.ok(rows.length > 10, `read ${rows.length} rows`);
    assert.deepEqual(mapProblems(rows, tree), [], "the README's map of the code (## Architecture)");
    assert.deepEqual(missingPaths(architecture, '', tree), [], "paths in the README's Architecture section");
    const changes = await readFile(join(ROOT, 'docs', 'architecture.md'), 'utf8');
    assert.deepEqual(missingPaths(changes, 'docs', tree), [], 'paths in docs/architecture.md');
  });
});
