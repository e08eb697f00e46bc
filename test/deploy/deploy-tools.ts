/**
 * The external tools the deploy tests drive: `kubectl kustomize` renders deploy/, `docker compose config`
 * validates temporal/docker-compose.yml. A missing tool fails the test with what to install, never skips it.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { loadAllYaml } from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';

const execFileAsync = promisify(execFile);

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command from the repository root; a missing program becomes an error naming how to get it. */
export async function runTool(input: { argv: readonly string[]; missingHint: string }): Promise<CommandResult> {
  const [program, ...args] = input.argv;
  if (program === undefined) throw new Error('runTool: empty argv');
  try {
    const { stdout, stderr } = await execFileAsync(program, args, { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 });
    return { stdout, stderr };
  } catch (error) {
    if (isMissingProgram(error))
      throw new Error(`${program} not found on PATH: ${input.missingHint}`, { cause: error });
    const stderr = typeof error === 'object' && error !== null && 'stderr' in error ? String(error.stderr) : '';
    throw new Error(`\`${input.argv.join(' ')}\` failed: ${stderr.trim() || String(error)}`, { cause: error });
  }
}

function isMissingProgram(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'ENOENT';
}

/** `kubectl` by default; `KUBECTL=/path/to/kubectl` picks another (e.g. to check an older kustomize). */
export const KUBECTL = process.env['KUBECTL'] ?? 'kubectl';

/** Renders the kustomize base (or an overlay of it) and parses every object (client-node's `loadAllYaml`). */
export async function renderDeployBase(dir = 'deploy'): Promise<{ text: string; objects: KubernetesObject[] }> {
  const { stdout } = await runTool({
    argv: [KUBECTL, 'kustomize', dir],
    missingHint:
      'the deploy tests render the base with `kubectl kustomize`; install kubectl (Debian: `apt-get install ' +
      'kubernetes-client`) or set KUBECTL to its path',
  });
  return { text: stdout, objects: loadAllYaml(stdout) as KubernetesObject[] };
}

/**
 * The Compose CLI of this machine: the v2 plugin (`docker compose`) when it answers, else the standalone
 * `docker-compose` (Debian's docker-compose package, v1.29).
 */
export async function composeCommand(): Promise<readonly string[]> {
  try {
    await execFileAsync('docker', ['compose', 'version']);
    return ['docker', 'compose'];
  } catch {
    try {
      await execFileAsync('docker-compose', ['version']);
      return ['docker-compose'];
    } catch (error) {
      throw new Error(
        'neither `docker compose` (the Compose v2 plugin) nor `docker-compose` answers: install one ' +
          '(Debian: `apt-get install docker-compose`) to validate temporal/docker-compose.yml',
        { cause: error },
      );
    }
  }
}

export async function readRepoFile(path: string): Promise<string> {
  return readFile(new URL(path, `file://${REPO_ROOT}`), 'utf8');
}
