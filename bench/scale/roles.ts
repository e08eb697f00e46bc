/**
 * How the benchmark starts eniflow's processes: each role's entry point (from `src/` with tsx, or from `dist/` as the
 * image runs it), and the NODE_OPTIONS its Deployment sets.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { ManagedProcess } from '../../scripts/lib/managed-process.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `worker`, `watcher`, or both in one process (`--role all`). */
export type BenchRole = 'worker' | 'watcher' | 'all';

/**
 * A role's command line after `node`: from `src/` with tsx, or the compiled entry in `dist/` as the image runs it
 * (tsx's loader alone adds about 220 MiB to a worker's peak RSS: memory figures come from `--dist`). The one process
 * is `src/main.ts --role all` (what `npm start -- --role all` runs) or `dist/main.js --role all`.
 */
export function roleArgs(role: BenchRole, dist: boolean): string[] {
  const roleFlag = role === 'all' ? ['--role', 'all'] : [];
  if (dist) {
    const entry = role === 'all' ? 'dist/main.js' : `dist/${role}/main.js`;
    if (!existsSync(join(REPO_ROOT, entry))) throw new Error(`--dist: ${entry} is missing; run npm run build first`);
    return [entry, ...roleFlag];
  }
  // `npm start` imports all of tsx (src/main.ts may load the dev tooling of the embedded default); the roles on their
  // own take tsx's ESM hooks only: src/ is all ESM, and without the CommonJS hooks the thousands of require() calls
  // inside node_modules skip tsx's resolver (about 0.7 s less CPU per worker start).
  if (role === 'all') return ['--import', 'tsx', 'src/main.ts', ...roleFlag];
  return ['--import', 'tsx/esm', `src/${role}/main.ts`];
}

export function startRole(input: {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  logDir: string;
}): ManagedProcess {
  return new ManagedProcess({
    name: input.name,
    command: process.execPath,
    args: input.args,
    cwd: REPO_ROOT,
    env: input.env,
    logPath: join(input.logDir, `${input.name}.log`),
  });
}

/**
 * The NODE_OPTIONS value the role's Deployment in deploy/ sets (`- name: NODE_OPTIONS` then `value: …`), undefined
 * when it sets none. The one process takes the value of overlays/single-process (the worker's Deployment as that
 * overlay patches it), or the worker's when the overlay sets none.
 */
export function deployedNodeOptions(role: BenchRole): string | undefined {
  if (role === 'all') {
    const overlay = nodeOptionsIn(join(REPO_ROOT, 'overlays', 'single-process', 'worker-runs-both-roles.yaml'));
    return overlay ?? deployedNodeOptions('worker');
  }
  return nodeOptionsIn(join(REPO_ROOT, 'deploy', `${role}-deployment.yaml`));
}

function nodeOptionsIn(file: string): string | undefined {
  const text = readFileSync(file, 'utf8');
  const match = /- name: NODE_OPTIONS\s*\n\s*value:\s*(.+)/.exec(text);
  const value = match?.[1]?.trim().replace(/^(["'])(.*)\1$/, '$2');
  return value === undefined || value === '' ? undefined : value;
}
