/**
 * The Event reason catalogue (src/ipam/event-reasons.ts) is the only place a reason is spelled: every entry is keyed
 * by its reason, Terway's reasons are used where eniflow raises Terway's condition, no file of src/ writes a reason
 * or an Event type inline (each string of src/ is read, comments left out), every entry is written by some code, a
 * notice goes only on the objects its entry names (tsc checks that), and the runbook's "Event reasons" tables list
 * exactly the catalogue (cells compared, so Prettier's padding does not matter). A failing table check prints the
 * rows the runbook should have.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

import ts from 'typescript';

import { CONDITION_REASONS, EVENT_REASONS } from '../../../src/ipam/event-reasons.js';
import { ENI_CONDITION_TYPES } from '../../../src/ipam/node-model.js';
import { IPAM_STATES } from '../../../src/workflows/messages.js';
import type { EventInput } from '../../../src/workflows/node/tell/event-writer.js';
import { sourceFiles } from './source-files.js';

const ROOT = resolve(import.meta.dirname, '../../..');

const CATALOGUE = join('src', 'ipam', 'event-reasons.ts');

/** Every string literal of src/ but the catalogue (import paths and literal types included, comments not). */
async function sourceStrings(): Promise<{ text: string; at: string }[]> {
  const found: { text: string; at: string }[] = [];
  for (const file of await sourceFiles(join(ROOT, 'src'))) {
    const path = relative(ROOT, file);
    if (path === CATALOGUE) continue;
    const source = ts.createSourceFile(path, await readFile(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push({ text: node.text, at: `${path}:${line}` });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/**
 * Reasons that are also the name of something else the code spells: a core Node condition (`SufficientIP`), an ENI
 * condition or an `IpamState` (`InsufficientIP`). Those words may stand alone; as a reason they are caught by the
 * `reason:` check.
 */
const HOMONYMS = new Set<string>([
  ...Object.values(CONDITION_REASONS).map((entry) => entry.condition),
  ...ENI_CONDITION_TYPES,
  ...IPAM_STATES,
]);

const terwayCell = (terway: string | undefined): string => (terway === undefined ? 'no' : `yes: ${terway}`);

/** The rows the runbook's tables must have, in catalogue order. */
export function catalogueRows(): { events: string[][]; conditions: string[][] } {
  return {
    events: Object.values(EVENT_REASONS).map((entry) => [
      `\`${entry.reason}\``,
      entry.type,
      entry.on,
      entry.meaning,
      terwayCell('terway' in entry ? entry.terway : undefined),
    ]),
    conditions: Object.values(CONDITION_REASONS).map((entry) => [
      `\`${entry.reason}\``,
      `\`${entry.condition}=${entry.status}\``,
      entry.meaning,
      terwayCell('terway' in entry ? entry.terway : undefined),
    ]),
  };
}

/** The body rows of each Markdown table in `text`, as trimmed cells (header and separator left out). */
function tablesOf(text: string): string[][][] {
  const tables: string[][][] = [];
  let current: string[][] | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) {
      current = undefined;
      continue;
    }
    const cells = line
      .slice(1, line.endsWith('|') ? -1 : undefined)
      .split('|')
      .map((cell) => cell.trim());
    if (current === undefined) {
      current = [];
      tables.push(current);
      continue; // the header
    }
    if (cells.every((cell) => /^:?-+:?$/.test(cell))) continue;
    current.push(cells);
  }
  return tables;
}

const asTable = (rows: string[][]): string => rows.map((row) => `| ${row.join(' | ')} |`).join('\n');

void describe('the Event reason catalogue', () => {
  void it('keys every entry by its reason', () => {
    for (const [key, entry] of Object.entries(EVENT_REASONS)) assert.equal(entry.reason, key);
    for (const [key, entry] of Object.entries(CONDITION_REASONS)) assert.equal(entry.reason, key);
  });

  void it("uses Terway's reasons where eniflow raises Terway's condition", () => {
    assert.equal(EVENT_REASONS.PrefixModeImmutable.reason, 'PrefixModeImmutable');
    assert.equal(EVENT_REASONS.AllocIPFailed.reason, 'AllocIPFailed');
    assert.equal(CONDITION_REASONS.InsufficientIP.reason, 'InsufficientIP');
    assert.equal(CONDITION_REASONS.SufficientIP.reason, 'SufficientIP');
    const terways = [...Object.values(EVENT_REASONS), ...Object.values(CONDITION_REASONS)]
      .filter((entry) => 'terway' in entry)
      .map((entry) => entry.reason)
      .sort();
    assert.deepEqual(terways, [
      'AllocIPFailed',
      'InsufficientIP',
      'InsufficientIP',
      'PrefixModeImmutable',
      'SufficientIP',
    ]);
  });

  void it('is the only place in src/ that spells a reason', async () => {
    const inline: string[] = [];
    for (const file of await sourceFiles(join(ROOT, 'src'))) {
      if (file.endsWith(join('ipam', 'event-reasons.ts'))) continue;
      const lines = (await readFile(file, 'utf8')).split('\n');
      lines.forEach((line, index) => {
        // `reason: 'AllocIPFailed'`, `reason: ok ? 'A' : 'B'`, `reason: 'A' | 'B'`: a capitalised literal after `reason:`.
        if (/\breason\??:[^,;]*['"`][A-Z][A-Za-z]+['"`]/.test(line)) {
          inline.push(`${relative(ROOT, file)}:${index + 1}: ${line.trim()}`);
        }
      });
    }
    assert.deepEqual(inline, []);
  });

  void it('is the only place in src/ with a string that is a reason or an Event type', async () => {
    const reasons = new Set([...Object.keys(EVENT_REASONS), ...Object.keys(CONDITION_REASONS)]);
    const spelled = (await sourceStrings()).filter(
      ({ text }) => (reasons.has(text) && !HOMONYMS.has(text)) || text === 'Warning' || text === 'Normal',
    );
    assert.deepEqual(
      spelled.map(({ text, at }) => `${at}: '${text}'`),
      [],
    );
  });

  void it('has no entry that no code writes', async () => {
    const texts = await Promise.all(
      (await sourceFiles(join(ROOT, 'src')))
        .filter((file) => relative(ROOT, file) !== CATALOGUE)
        .map((file) => readFile(file, 'utf8')),
    );
    const source = texts.join('\n');
    const unused = [
      ...Object.keys(EVENT_REASONS).filter((key) => !source.includes(`EVENT_REASONS.${key}`)),
      ...Object.keys(CONDITION_REASONS).filter((key) => !source.includes(`CONDITION_REASONS.${key}`)),
    ];
    assert.deepEqual(unused, []);
  });

  void it('says of every Event the objects it goes on: a pod, the Node CR, or both', () => {
    const onPod = Object.values(EVENT_REASONS).filter((entry) => entry.on.startsWith('Pod'));
    const onNode = Object.values(EVENT_REASONS).filter((entry) => entry.on.includes('Node CR'));
    assert.deepEqual(
      Object.values(EVENT_REASONS).filter((entry) => !onPod.includes(entry) && !onNode.includes(entry)),
      [],
    );
    assert.deepEqual(onPod.map((entry) => entry.reason).sort(), ['IPAllocationPending', 'IPRebound']);
    // The Event writer's types follow `on`: tsc fails if either wrong placement below compiles.
    const pod = { namespace: 'default', name: 'web-0' };
    const allowed: EventInput[] = [
      { reason: EVENT_REASONS.IPRebound, message: 'rebound', pod },
      { reason: EVENT_REASONS.IPAllocationPending, message: 'waits', pod },
      { reason: EVENT_REASONS.IPAllocationPending, message: '60 pods wait' },
      { reason: EVENT_REASONS.VSwitchBlocked, message: 'blocked' },
    ];
    const refused: EventInput[] = [
      // @ts-expect-error: VSwitchBlocked goes on the node, never on a pod
      { reason: EVENT_REASONS.VSwitchBlocked, message: 'blocked', pod },
      // @ts-expect-error: IPRebound goes on a pod, never on the node
      { reason: EVENT_REASONS.IPRebound, message: 'rebound' },
    ];
    assert.equal(allowed.length + refused.length, 6);
  });

  void it("matches the runbook's Event reasons tables", async () => {
    const runbook = await readFile(join(ROOT, 'docs/runbook.md'), 'utf8');
    const section = runbook.split(/^## Event reasons$/m)[1]?.split(/^## /m)[0];
    assert.ok(section !== undefined, 'docs/runbook.md has a "## Event reasons" section');
    const [events, conditions] = tablesOf(section);
    const expected = catalogueRows();
    assert.deepEqual(events, expected.events, `the Events table should read:\n${asTable(expected.events)}`);
    assert.deepEqual(
      conditions,
      expected.conditions,
      `the conditions table should read:\n${asTable(expected.conditions)}`,
    );
  });
});
