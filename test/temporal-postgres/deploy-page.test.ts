/**
 * The commands docs/deploy.md ("The Temporal side") gives operators, run as written against the PostgreSQL-backed
 * server of the test environment (`npm run test:temporal-postgres`) with the cached Temporal CLI as `temporal`:
 * each succeeds, and what it prints is what the page says to look for (the release, the retention, every search
 * attribute with its type). test/unit/scripts/deploy-page.test.ts checks the page's names and values.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

import { TEMPORAL_SEARCH_ATTRIBUTES, TEMPORAL_SERVER_VERSION } from '../../scripts/lib/temporal-settings.js';
import { TEST_ENV_VARS, requireTestEnvVar } from '../../scripts/lib/test-env-vars.js';
import { REPO_ROOT, TEMPORAL_CLI } from '../../scripts/lib/tools-config.js';

const execFileAsync = promisify(execFile);

const page = readFileSync(join(REPO_ROOT, 'docs', 'deploy.md'), 'utf8');
const section = page.slice(page.indexOf('\n## The Temporal side\n'), page.indexOf('\n## A local Temporal server'));

/** The first ```sh block after `marker` in the section. */
function shBlockAfter(marker: string): string {
  const start = section.indexOf(marker);
  assert.ok(start >= 0, `the section has "${marker}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(section.slice(start))?.[1];
  assert.ok(block !== undefined, `a sh block after "${marker}"`);
  return block;
}

/** Runs a shell command of the page against the test server; resolves with its output. */
async function run(command: string): Promise<string> {
  const { stdout, stderr } = await execFileAsync('/bin/sh', ['-ec', command], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: requireTestEnvVar(TEST_ENV_VARS.temporalAddress),
      PATH: `${dirname(TEMPORAL_CLI.binaryPath)}${delimiter}${process.env['PATH'] ?? ''}`,
    },
  });
  return stdout + stderr;
}

const checks = shBlockAfter('**Checking a running cluster**')
  .split('\n')
  .filter((line) => line.startsWith('temporal '));

describe('docs/deploy.md: the Temporal side, on the PostgreSQL-backed server', () => {
  it('is a server of the environment this suite runs on', () => {
    assert.equal(process.env[TEST_ENV_VARS.temporalKind], 'postgres');
    assert.ok(checks.length >= 5, `found ${checks.length} check commands`);
  });

  it('registers the search attributes with the loop the page gives (again: a no-op)', async () => {
    await run(shBlockAfter('**Search attributes**'));
  });

  for (const command of checks) {
    it(command.replace(/\s+#.*$/, ''), async () => {
      const output = await run(command);
      if (command.startsWith('temporal operator cluster system')) {
        assert.ok(output.includes(TEMPORAL_SERVER_VERSION), output);
      } else if (command.startsWith('temporal operator namespace describe')) {
        assert.match(output, /WorkflowExecutionRetentionTtl\s+72h/, output);
      } else if (command.startsWith('temporal operator search-attribute list')) {
        for (const [name, type] of Object.entries(TEMPORAL_SEARCH_ATTRIBUTES)) {
          assert.match(output, new RegExp(`^\\s*${name}\\s+${type}\\s*$`, 'm'), `${name} ${type} in\n${output}`);
        }
      }
    });
  }
});
