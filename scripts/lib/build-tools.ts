/**
 * Builds the test-environment binaries that are missing from the cache (see tools-config.ts).
 *
 * A binary counts as present only when its build record exists, which is written last: an interrupted build
 * leaves no record and is redone. Each build goes into a fresh temporary directory that is renamed into place,
 * so a concurrent `npm run tools` never sees a half-written binary.
 */
import { spawn } from 'node:child_process';
import { access, constants, mkdir, readFile, rename, rm, mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import {
  BUILD_RECORD_FILE,
  CACHE_ROOT,
  GO_COMMAND,
  KUBE_APISERVER_SOURCE_DIR,
  KUBERNETES_VERSION,
  TEMPORAL_CLI,
  kubeApiserverTool,
  ECS_SDK_CONFORMANCE_SOURCE_DIR,
  ecsSdkConformanceTool,
} from './tools-config.js';
import type { BuildRecord, CachedTool } from './tools-config.js';

/** What happened to one tool during {@link ensureTools}. */
export interface ToolOutcome {
  readonly tool: CachedTool;
  readonly action: 'cached' | 'built';
  readonly durationMs: number;
}

/** A tool together with the way to build it into a given directory. */
interface BuildableTool {
  readonly tool: CachedTool;
  /** The command that writes the binary into `outputDir` under the tool's binary name. */
  buildCommand(outputDir: string): BuildCommand;
}

interface BuildCommand {
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

function temporalCliBuild(): BuildableTool {
  const cliVersion = TEMPORAL_CLI.version.replace(/^v/, '');
  return {
    tool: TEMPORAL_CLI,
    // The CLI release flags (CGO off, stripped, version stamp), as in the CLI's .goreleaser.yml.
    buildCommand: (outputDir) => ({
      args: [
        'install',
        '-ldflags',
        `-s -w -X github.com/temporalio/cli/temporalcli.Version=${cliVersion}`,
        `${TEMPORAL_CLI.goPackage}@${TEMPORAL_CLI.version}`,
      ],
      cwd: CACHE_ROOT,
      env: { GOBIN: outputDir, CGO_ENABLED: '0' },
    }),
  };
}

function kubeApiserverBuild(): BuildableTool {
  const tool = kubeApiserverTool();
  const [major, minor] = KUBERNETES_VERSION.replace(/^v/, '').split('.');
  // Without these, /version reports v0.0.0-master and clients that gate on the server version misbehave.
  const versionFlags = ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) => [
    `-X ${pkg}.gitVersion=${KUBERNETES_VERSION}`,
    `-X ${pkg}.gitMajor=${major ?? ''}`,
    `-X ${pkg}.gitMinor=${minor ?? ''}`,
    `-X ${pkg}.gitTreeState=clean`,
  ]);
  return {
    tool,
    buildCommand: (outputDir) => ({
      args: [
        'build',
        '-trimpath',
        '-ldflags',
        ['-s', '-w', ...versionFlags].join(' '),
        '-o',
        join(outputDir, 'kube-apiserver-testenv'),
        '.',
      ],
      cwd: KUBE_APISERVER_SOURCE_DIR,
      env: { CGO_ENABLED: '0' },
    }),
  };
}

function ecsSdkConformanceBuild(): BuildableTool {
  const tool = ecsSdkConformanceTool();
  return {
    tool,
    buildCommand: (outputDir) => ({
      args: ['build', '-trimpath', '-ldflags', '-s -w', '-o', join(outputDir, 'ecs-sdk-conformance'), '.'],
      cwd: ECS_SDK_CONFORMANCE_SOURCE_DIR,
      env: { CGO_ENABLED: '0' },
    }),
  };
}

function buildableTools(): readonly BuildableTool[] {
  return [temporalCliBuild(), kubeApiserverBuild(), ecsSdkConformanceBuild()];
}

/** The tools the test servers need, in the order {@link ensureTools} builds them. */
export function requiredTools(): readonly CachedTool[] {
  return buildableTools().map((buildable) => buildable.tool);
}

/** Whether a tool's binary and its completed-build record are both in the cache. */
export async function isToolCached(tool: CachedTool): Promise<boolean> {
  try {
    await access(tool.binaryPath, constants.X_OK);
    await access(join(tool.cacheDir, BUILD_RECORD_FILE), constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** Throws with the command to run when a tool the test servers need has not been built. */
export async function assertToolsBuilt(): Promise<void> {
  const missing: string[] = [];
  for (const tool of requiredTools()) {
    if (!(await isToolCached(tool))) missing.push(`${tool.name} ${tool.version} (${tool.binaryPath})`);
  }
  if (missing.length > 0) {
    throw new Error(`Test-environment tools are not built yet: ${missing.join(', ')}. Run \`npm run tools\` first.`);
  }
}

/**
 * Builds every missing tool (or only those `wanted` selects), one after the other (each build already uses all
 * cores).
 */
export async function ensureTools(
  log: (line: string) => void,
  wanted: (tool: CachedTool) => boolean = () => true,
): Promise<readonly ToolOutcome[]> {
  const outcomes: ToolOutcome[] = [];
  for (const buildable of buildableTools().filter((candidate) => wanted(candidate.tool))) {
    outcomes.push(await ensureTool(buildable, log));
  }
  return outcomes;
}

async function ensureTool(buildable: BuildableTool, log: (line: string) => void): Promise<ToolOutcome> {
  const { tool } = buildable;
  const startedAt = Date.now();
  if (await isToolCached(tool)) {
    return { tool, action: 'cached', durationMs: Date.now() - startedAt };
  }

  await mkdir(CACHE_ROOT, { recursive: true });
  const goVersion = (await captureOutput([GO_COMMAND, 'env', 'GOVERSION'])).trim();
  const stagingDir = await mkdtemp(`${tool.cacheDir}.partial-`);
  try {
    const command = buildable.buildCommand(stagingDir);
    log(`${tool.name} ${tool.version}: building with ${goVersion} (${[GO_COMMAND, ...command.args].join(' ')})`);
    await runInherited({ command: GO_COMMAND, ...command });
    const record: BuildRecord = {
      tool: tool.name,
      version: tool.version,
      goVersion,
      builtAt: new Date().toISOString(),
      buildDurationMs: Date.now() - startedAt,
      command: [GO_COMMAND, ...command.args],
    };
    await writeFile(join(stagingDir, BUILD_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
    // A leftover directory without a record is an earlier, interrupted build: replace it.
    await rm(tool.cacheDir, { recursive: true, force: true });
    await rename(stagingDir, tool.cacheDir);
  } finally {
    await rm(stagingDir, { recursive: true, force: true });
  }
  return { tool, action: 'built', durationMs: Date.now() - startedAt };
}

/** Reads the build record of a cached tool, e.g. to report how long its build took. */
export async function readBuildRecord(tool: CachedTool): Promise<BuildRecord> {
  return JSON.parse(await readFile(join(tool.cacheDir, BUILD_RECORD_FILE), 'utf8')) as BuildRecord;
}

function runInherited(input: BuildCommand & { command: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(input.command, input.args, {
      cwd: input.cwd,
      env: { ...process.env, ...input.env },
      stdio: 'inherit',
    });
    child.on('error', (error) => {
      reject(goSpawnError(input.command, error));
    });
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${input.command} ${input.args.join(' ')} failed (${signal ?? `exit code ${code}`})`));
    });
  });
}

function captureOutput([command, ...args]: readonly [string, ...string[]]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', (error) => {
      reject(goSpawnError(command, error));
    });
    child.on('exit', (code) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args.join(' ')} exited with code ${code}`));
    });
  });
}

function goSpawnError(command: string, error: Error): Error {
  const hint =
    'code' in error && error.code === 'ENOENT'
      ? ` (no Go toolchain found: install Go >= 1.26 or set GO=/path/to/go, e.g. GO=/usr/local/go/bin/go)`
      : '';
  return new Error(`could not run ${command}${hint}: ${error.message}`, { cause: error });
}

/** Formats a duration as `1m02s` or `3.4s` for progress messages. */
export function formatDuration(durationMs: number): string {
  if (durationMs < 60_000) return `${(durationMs / 1000).toFixed(1)}s`;
  const totalSeconds = Math.round(durationMs / 1000);
  return `${Math.floor(totalSeconds / 60)}m${String(totalSeconds % 60).padStart(2, '0')}s`;
}
