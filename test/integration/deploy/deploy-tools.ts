/**
 * The tools the deploy tests drive, built by `npm run tools` into the cache like the test servers (never taken
 * from PATH): kustomize renders deploy/, helm renders deploy/helm/eniflow, and compose-config (compose-go, the
 * loader of `docker compose config`) validates temporal/docker-compose.yml. A tool that is not built fails the
 * test with the command to run, never skips it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { loadAllYaml } from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';

import { cachedToolPath } from '../../../scripts/lib/build-tools.js';
import { HELM, KUSTOMIZE, composeConfigTool } from '../../../scripts/lib/tools-config.js';

const execFileAsync = promisify(execFile);

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The chart, relative to the repository root. */
export const HELM_CHART = 'deploy/helm/eniflow';

export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command from the repository root; a failure carries the command and its stderr. */
export async function runTool(input: {
  argv: readonly string[];
  env?: Readonly<Record<string, string>>;
}): Promise<CommandResult> {
  const [program, ...args] = input.argv;
  if (program === undefined) throw new Error('runTool: empty argv');
  try {
    const { stdout, stderr } = await execFileAsync(program, args, {
      cwd: REPO_ROOT,
      env: { ...process.env, ...input.env },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { stdout, stderr };
  } catch (error) {
    const stderr = typeof error === 'object' && error !== null && 'stderr' in error ? String(error.stderr) : '';
    throw new Error(`\`${input.argv.join(' ')}\` failed: ${stderr.trim() || String(error)}`, { cause: error });
  }
}

/** Renders the kustomize base (`kustomize build <dir>`, what `kubectl kustomize` runs), or an overlay, and parses it. */
export async function renderDeployBase(dir = 'deploy'): Promise<{ text: string; objects: KubernetesObject[] }> {
  const { stdout } = await runTool({ argv: [await cachedToolPath(KUSTOMIZE), 'build', dir] });
  return { text: stdout, objects: loadAllYaml(stdout) as KubernetesObject[] };
}

/** How to render the chart: release name and namespace, and `--set` / `--set-string` values. */
export interface HelmRenderInput {
  readonly release?: string;
  readonly namespace?: string;
  readonly set?: Readonly<Record<string, string | number | boolean>>;
  readonly setString?: Readonly<Record<string, string>>;
}

/**
 * `helm template` of the chart with its CRDs, parsed. Helm's config, cache and data directories point at a
 * temporary directory, so the test neither reads nor writes the user's Helm set-up.
 */
export async function renderHelmChart(input: HelmRenderInput = {}): Promise<KubernetesObject[]> {
  const helm = await cachedToolPath(HELM);
  const home = await mkdtemp(join(tmpdir(), 'eniflow-helm-'));
  try {
    const pairs = (values: Readonly<Record<string, unknown>> | undefined): string[] =>
      Object.entries(values ?? {}).map(([key, value]) => `${key}=${String(value)}`);
    const { stdout } = await runTool({
      argv: [
        helm,
        'template',
        input.release ?? 'eniflow',
        HELM_CHART,
        '--namespace',
        input.namespace ?? 'eniflow-system',
        '--include-crds',
        ...pairs(input.set).flatMap((pair) => ['--set', pair]),
        ...pairs(input.setString).flatMap((pair) => ['--set-string', pair]),
      ],
      env: helmHome(home),
    });
    return loadAllYaml(withoutEmptyDocuments(stdout)) as KubernetesObject[];
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/**
 * Drops the documents holding only comments, which helm emits for templates that render nothing (client-node's
 * `loadAllYaml` cannot type a null document).
 */
function withoutEmptyDocuments(text: string): string {
  return text
    .split(/^---[ \t]*$/m)
    .filter((document) => document.split('\n').some((line) => line.trim() !== '' && !line.trimStart().startsWith('#')))
    .join('---\n');
}

/** `helm lint --strict` of the chart; returns its output (throws on a finding). */
export async function lintHelmChart(): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'eniflow-helm-'));
  try {
    const { stdout } = await runTool({
      argv: [await cachedToolPath(HELM), 'lint', '--strict', HELM_CHART],
      env: helmHome(home),
    });
    return stdout;
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

function helmHome(home: string): Record<string, string> {
  return {
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_DATA_HOME: join(home, 'data'),
  };
}

/** `compose-config -f <file>`: the file as `docker compose config` resolves it, as YAML. */
export async function composeConfig(file: string): Promise<string> {
  const { stdout } = await runTool({ argv: [await cachedToolPath(composeConfigTool()), '-f', file] });
  return stdout;
}

export async function readRepoFile(path: string): Promise<string> {
  return readFile(new URL(path, `file://${REPO_ROOT}`), 'utf8');
}
