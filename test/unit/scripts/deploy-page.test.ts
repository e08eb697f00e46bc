/**
 * docs/deploy.md's "The Temporal side", the operators' page for the server, against scripts/lib/temporal-settings.ts:
 * the namespace and its retention, the search attributes with their types (table and the registration loop), the
 * dynamic config eniflow sets with its values and the server limits it stays within with their defaults. A setting
 * changed in one place and not the other fails here. (test/temporal-postgres/deploy-page.test.ts runs the page's
 * commands against a server.)
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import {
  FRESH_SERVER_DYNAMIC_CONFIG,
  TEMPORAL_NAMESPACE,
  TEMPORAL_NAMESPACE_RETENTION,
  TEMPORAL_SEARCH_ATTRIBUTES,
  TEMPORAL_SERVER_LIMITS,
  TEMPORAL_SERVER_VERSION,
  eniflowDynamicConfig,
} from '../../../scripts/lib/temporal-settings.js';
import { REPO_ROOT } from '../../../scripts/lib/tools-config.js';

/** The section's text, from its heading to the next `## ` heading. */
function temporalSection(page = readFileSync(join(REPO_ROOT, 'docs', 'deploy.md'), 'utf8')): string {
  const start = page.indexOf('\n## The Temporal side\n');
  assert.ok(start >= 0, 'docs/deploy.md has a section "The Temporal side"');
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end === -1 ? undefined : end);
}

/** The body rows of the markdown table whose header's first two cells are given, each as cells without backticks. */
function tableRows(section: string, header: readonly [string, string]): string[][] {
  const lines = section.split('\n');
  const cellsOf = (line: string): string[] =>
    line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim().replaceAll('`', ''));
  const start = lines.findIndex((line) => {
    const [first, second] = cellsOf(line);
    return line.startsWith('|') && first === header[0] && second === header[1];
  });
  assert.ok(start >= 0, `a table headed ${header.join(' | ')}`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(cellsOf(line));
  }
  return rows;
}

/** A value cell's number or boolean (its first word: `4194304 (4 MiB)` is 4194304). */
function valueOf(cell: string | undefined): boolean | number {
  const word = (cell ?? '').split(/\s/)[0] ?? '';
  if (word === 'true' || word === 'false') return word === 'true';
  return Number(word);
}

describe('docs/deploy.md, the Temporal side', () => {
  const section = temporalSection();

  it("names the server release, the namespace and the compose job's retention", () => {
    assert.ok(section.includes(`Temporal server ${TEMPORAL_SERVER_VERSION}`), TEMPORAL_SERVER_VERSION);
    assert.ok(section.includes(`default \`${TEMPORAL_NAMESPACE}\``), TEMPORAL_NAMESPACE);
    assert.ok(section.includes(`with \`${TEMPORAL_NAMESPACE_RETENTION}\``), TEMPORAL_NAMESPACE_RETENTION);
  });

  it('lists the search attributes with their types, and registers the same', () => {
    const rows = tableRows(section, ['name', 'type']).map(([name, type]) => [name, type]);
    assert.deepEqual(rows, Object.entries(TEMPORAL_SEARCH_ATTRIBUTES));
    const loop = /for attribute in ([^;]+); do/.exec(section)?.[1];
    assert.ok(loop !== undefined, 'a registration loop');
    const pairs = loop
      .replaceAll('\\', ' ')
      .trim()
      .split(/\s+/)
      .map((pair) => pair.split(':'));
    assert.deepEqual(pairs, Object.entries(TEMPORAL_SEARCH_ATTRIBUTES));
  });

  it('gives the dynamic config eniflow sets, with the values for the default burst', () => {
    const rows = tableRows(section, ['key', 'value']).map(([key, value]) => [key, valueOf(value)]);
    assert.deepEqual(
      rows,
      eniflowDynamicConfig().map((setting) => [setting.key, setting.value]),
    );
    for (const setting of FRESH_SERVER_DYNAMIC_CONFIG) {
      assert.ok(section.includes(`\`${setting.key}: ${String(setting.value)}\``), setting.key);
    }
  });

  it("gives the server limits eniflow stays within, with the server's defaults", () => {
    const rows = tableRows(section, ['key', 'default']).map(([key, value]) => [key, valueOf(value)]);
    assert.deepEqual(
      rows,
      TEMPORAL_SERVER_LIMITS.map((setting) => [setting.key, setting.value]),
    );
  });
});
