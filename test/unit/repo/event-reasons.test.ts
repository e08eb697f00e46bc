/**
 * The Event reason catalogue (src/ipam/event-reasons.ts) is the only place a reason is spelled: every entry is keyed
 * by its reason, Terway's reasons are used where eniflow raises Terway's condition, no file of src/ writes a reason
 * inline, and the runbook's "Event reasons" tables list exactly the catalogue (cells compared, so Prettier's
 * padding does not matter). A failing table check prints the rows the runbook should have.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

import { CONDITION_REASONS, EVENT_REASONS } from '../../../src/ipam/event-reasons.js';

const ROOT = resolve(import.meta.dirname, '../../..');

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(path);
      return Promise.resolve(entry.name.endsWith('.ts') ? [path] : []);
    }),
  );
  return nested.flat();
}

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
