/**
 * The project runs on the Node major in .nvmrc, whatever Node runs npm: `npm ci` installs the official Node binary
 * of this platform (the `node-<os>-<cpu>` packages in package.json's optionalDependencies: npm skips the ones whose
 * `os`/`cpu` do not match), and npm scripts find it first on PATH (node_modules/.bin/node). Where no such package
 * exists (macOS on arm64), the Node on PATH must be that major. These tests fail when a test file, a process it
 * spawns by name, or the runners above it run on another major.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import { REPO_ROOT } from '../../../scripts/lib/tools-config.js';

const expectedMajor = readFileSync(join(REPO_ROOT, '.nvmrc'), 'utf8').trim();

function majorOf(version: string): string {
  return version.replace(/^v/, '').split('.')[0] ?? '';
}

/** The executable, the parent and the command line of a process: from /proc on Linux, from ps(1) elsewhere. */
function processInfo(pid: number): { exe: string; parent: number; commandLine: string } {
  if (existsSync('/proc/self/status')) {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      exe: readlinkSync(`/proc/${pid}/exe`),
      parent: Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? '0'),
      commandLine: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' '),
    };
  }
  const ps = (field: string): string =>
    execFileSync('ps', ['-o', `${field}=`, '-p', String(pid)], { encoding: 'utf8' }).trim();
  // comm is the executable's path on macOS (as it was started: a bare `node` is the one on PATH).
  return { exe: ps('comm'), parent: Number(ps('ppid')), commandLine: ps('args') };
}

const packageJson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  optionalDependencies?: Record<string, string>;
};
const nodePackages = Object.entries(packageJson.optionalDependencies ?? {}).filter(([name]) =>
  /^node-(linux|darwin|win)-[a-z0-9]+$/.test(name),
);
const platformPackage = `node-${process.platform}-${process.arch}`;

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

  it('every Node binary package in package.json is of that major', () => {
    assert.ok(nodePackages.length > 0, 'package.json lists the Node binary packages');
    for (const [name, version] of nodePackages) {
      assert.equal(majorOf(version), expectedMajor, `${name}@${version}`);
    }
  });

  it(`\`node\` on PATH is the binary of ${platformPackage} where package.json lists it`, (t) => {
    if (!nodePackages.some(([name]) => name === platformPackage)) {
      t.skip(`no ${platformPackage} in package.json: the Node on PATH is used`);
      return;
    }
    const onPath = execFileSync('node', ['-p', 'process.execPath'], { encoding: 'utf8' }).trim();
    assert.equal(realpathSync(onPath), realpathSync(join(REPO_ROOT, 'node_modules', platformPackage, 'bin', 'node')));
  });
});
