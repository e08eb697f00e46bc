/**
 * Sizes a reader can hold: no file of src/ over 400 lines, no function over 80 lines in src/workflows/ (replayed code,
 * read step by step) and none over 200 in src/activities/, src/watcher/ and src/worker/. A function is measured from
 * its first line to its last with everything nested in it, so a factory returning an object of activities counts as
 * one function, the sum of its parts. Functions are found with the TypeScript parser (declarations, methods,
 * constructors, accessors, arrow functions and function expressions), so a long arrow inside an object is caught too.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

import ts from 'typescript';
import { sourceFiles } from './source-files.js';

const ROOT = resolve(import.meta.dirname, '../../..');

const MAX_FILE_LINES = 400;

/** The longest function each folder of src/ allows (a folder not named has no function limit). */
const MAX_FUNCTION_LINES: readonly { folder: string; lines: number }[] = [
  { folder: 'src/workflows/', lines: 80 },
  { folder: 'src/activities/', lines: 200 },
  { folder: 'src/watcher/', lines: 200 },
  { folder: 'src/worker/', lines: 200 },
];

/** Lines of a text, a final newline not counting as one more. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

export interface FunctionSize {
  name: string;
  /** 1-based line of the function's first token (its doc comment left out). */
  line: number;
  lines: number;
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  if (
    (ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node) ||
      ts.isFunctionExpression(node)) &&
    node.name !== undefined
  ) {
    return node.name.getText(source);
  }
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText(source);
  }
  return '(anonymous)';
}

/** Every function of a TypeScript source with its length in lines, nested ones included (each on its own). */
export function functionSizes(fileName: string, text: string): FunctionSize[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const sizes: FunctionSize[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      sizes.push({ name: nameOf(node, source), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return sizes;
}

function functionLimit(path: string): number | undefined {
  return MAX_FUNCTION_LINES.find((limit) => path.startsWith(limit.folder))?.lines;
}

async function srcTexts(): Promise<{ path: string; text: string }[]> {
  const files = await sourceFiles(join(ROOT, 'src'));
  return Promise.all(
    files
      .sort()
      .map(async (file) => ({ path: relative(ROOT, file).split('\\').join('/'), text: await readFile(file, 'utf8') })),
  );
}

describe('sizes', () => {
  it('measures a factory as one function, its inner functions included, and an arrow in an object', () => {
    const text = [
      'export function createThings() {', // 1
      '  const helper = () => {', // 2
      '    return 1;', // 3
      '  };', // 4
      '  return {', // 5
      '    async one(input: number) {', // 6
      '      return input + helper();', // 7
      '    },', // 8
      '    two: (x: number) =>', // 9
      '      x * 2,', // 10
      '  };', // 11
      '}', // 12
      'class A {', // 13
      '  constructor() {}', // 14
      '  get b() { return 1; }', // 15
      '}', // 16
      'type F = (x: number) => number;', // 17: a type, no body
    ].join('\n');
    assert.deepEqual(
      functionSizes('x.ts', text).map((size) => `${size.name}@${size.line}:${size.lines}`),
      ['createThings@1:12', 'helper@2:3', 'one@6:3', 'two@9:2', 'constructor@14:1', 'b@15:1'],
    );
    assert.equal(lineCount('a\nb\n'), 2);
    assert.equal(lineCount('a\nb'), 2);
    assert.equal(lineCount(''), 0);
  });

  it(`no file of src/ is over ${MAX_FILE_LINES} lines`, async () => {
    const texts = await srcTexts();
    assert.ok(texts.length > 100, `read ${texts.length} files`);
    const long = texts
      .map(({ path, text }) => ({ path, lines: lineCount(text) }))
      .filter((file) => file.lines > MAX_FILE_LINES)
      .map((file) => `${file.path}: ${file.lines} lines`);
    assert.deepEqual(long, [], `files over ${MAX_FILE_LINES} lines: split them by concern`);
  });

  it(`no function over ${MAX_FUNCTION_LINES.map((limit) => `${limit.lines} lines in ${limit.folder}`).join(', ')}`, async () => {
    const long: string[] = [];
    let measured = 0;
    for (const { path, text } of await srcTexts()) {
      const limit = functionLimit(path);
      if (limit === undefined) continue;
      for (const size of functionSizes(path, text)) {
        measured++;
        if (size.lines > limit) long.push(`${path}:${size.line} ${size.name}: ${size.lines} lines (limit ${limit})`);
      }
    }
    assert.ok(measured > 300, `measured ${measured} functions`);
    assert.deepEqual(long, [], 'functions over their folder’s limit: split them into parts');
  });
});
