/**
 * Builds the test-environment binaries that are missing from the cache (see tools-config.ts).
 *
 * A binary counts as present only when its build record exists, which is written last: an interrupted build
 * leaves no record and is redone. Each build goes into a fresh temporary directory that is renamed into place,
 * so a concurrent `npm run tools` never sees a half-written binary. Go's own output goes to a log file in the
 * cache; the caller sees one progress line per tool every {@link PROGRESS_INTERVAL_MS}.
 */
import { spawn } from 'node:child_process';
import { access, constants, mkdir, mkdtemp, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

import {
  BUILD_RECORD_FILE,
  CACHE_ROOT,
  COMPOSE_CONFIG_SOURCE_DIR,
  GO_COMMAND,
  HELM,
  KUBE_APISERVER_SOURCE_DIR,
  KUBERNETES_VERSION,
  KUSTOMIZE,
  TEMPORAL_CLI,
  composeConfigTool,
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

/**
 * Which tools to build: `servers` are what `npm start` and the test servers run (Temporal CLI, kube-apiserver);
 * `all` adds what the deploy tests render and validate with (kustomize, helm, compose-config).
 */
export type ToolScope = 'servers' | 'all';

/** A tool together with the way to build it into a given directory. */
export interface BuildableTool {
  readonly tool: CachedTool;
  /** `extra`: built only on request (not by {@link ensureTools}), e.g. the PostgreSQL-backed Temporal server. */
  readonly scope: 'servers' | 'deploy' | 'extra';
  /** The command that writes the binary into `outputDir` under the tool's binary name. */
  buildCommand(outputDir: string): BuildCommand;
  /** Runs after the command succeeded, before the build is recorded: e.g. renames binaries, copies data files. */
  finish?(outputDir: string): Promise<void>;
}

export interface BuildCommand {
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

function temporalCliBuild(): BuildableTool {
  const cliVersion = TEMPORAL_CLI.version.replace(/^v/, '');
  return {
    tool: TEMPORAL_CLI,
    scope: 'servers',
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
    scope: 'servers',
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

/** `go install <package>@<version>`: the module's own go.mod and go.sum pin every dependency. */
function goInstallBuild(input: {
  tool: CachedTool & { readonly goPackage: string };
  ldflags: readonly string[];
}): BuildableTool {
  const { tool } = input;
  return {
    tool,
    scope: 'deploy',
    buildCommand: (outputDir) => ({
      args: [
        'install',
        '-trimpath',
        '-ldflags',
        ['-s', '-w', ...input.ldflags].join(' '),
        `${tool.goPackage}@${tool.version}`,
      ],
      cwd: CACHE_ROOT,
      env: { GOBIN: outputDir, CGO_ENABLED: '0' },
    }),
  };
}

/** The emulator's Go-SDK conformance driver (tools/ecs-sdk-conformance): for tests only, like the deploy tools. */
function ecsSdkConformanceBuild(): BuildableTool {
  const tool = ecsSdkConformanceTool();
  return {
    tool,
    scope: 'deploy',
    buildCommand: (outputDir) => ({
      args: ['build', '-trimpath', '-ldflags', '-s -w', '-o', join(outputDir, basename(tool.binaryPath)), '.'],
      cwd: ECS_SDK_CONFORMANCE_SOURCE_DIR,
      env: { CGO_ENABLED: '0' },
    }),
  };
}

function composeConfigBuild(): BuildableTool {
  const tool = composeConfigTool();
  return {
    tool,
    scope: 'deploy',
    buildCommand: (outputDir) => ({
      args: ['build', '-trimpath', '-ldflags', '-s -w', '-o', join(outputDir, basename(tool.binaryPath)), '.'],
      cwd: COMPOSE_CONFIG_SOURCE_DIR,
      env: { CGO_ENABLED: '0' },
    }),
  };
}

function buildableTools(scope: ToolScope): readonly BuildableTool[] {
  const all = [
    temporalCliBuild(),
    kubeApiserverBuild(),
    // kustomize reads its version from the module's build info; helm's comes from ldflags, as in its Makefile.
    goInstallBuild({ tool: KUSTOMIZE, ldflags: [] }),
    goInstallBuild({ tool: HELM, ldflags: [`-X helm.sh/helm/v4/internal/version.version=${HELM.version}`] }),
    composeConfigBuild(),
    ecsSdkConformanceBuild(),
  ];
  return scope === 'all' ? all : all.filter((buildable) => buildable.scope === 'servers');
}

/** The tools of a scope, in the order {@link ensureTools} builds them. */
export function requiredTools(scope: ToolScope = 'all'): readonly CachedTool[] {
  return buildableTools(scope).map((buildable) => buildable.tool);
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

/** Throws with the command to run when a tool is not built, e.g. before a test runs it. */
export async function cachedToolPath(tool: CachedTool): Promise<string> {
  if (!(await isToolCached(tool))) {
    throw new Error(`${tool.name} ${tool.version} is not built (${tool.binaryPath}). Run \`npm run tools\` first.`);
  }
  return tool.binaryPath;
}

/** Builds every missing tool of the scope, one after the other (each build already uses all cores). */
export async function ensureTools(
  log: (line: string) => void,
  scope: ToolScope = 'all',
): Promise<readonly ToolOutcome[]> {
  const outcomes: ToolOutcome[] = [];
  for (const buildable of buildableTools(scope)) {
    outcomes.push(await ensureTool(buildable, log));
  }
  return outcomes;
}

/** How often a running build reports its elapsed time. */
export const PROGRESS_INTERVAL_MS = 30_000;

/** Where Go's output of a tool's latest build is kept (`<cache>/logs/<cache key>.log`). */
export function buildLogPath(tool: CachedTool): string {
  return join(CACHE_ROOT, 'logs', `${basename(tool.cacheDir)}.log`);
}

/** Builds one tool unless it is cached (what {@link ensureTools} does for each tool of its scope). */
export async function ensureTool(buildable: BuildableTool, log: (line: string) => void): Promise<ToolOutcome> {
  const { tool } = buildable;
  const startedAt = Date.now();
  if (await isToolCached(tool)) {
    return { tool, action: 'cached', durationMs: Date.now() - startedAt };
  }

  const logPath = buildLogPath(tool);
  await mkdir(join(CACHE_ROOT, 'logs'), { recursive: true });
  const goVersion = (await captureOutput([GO_COMMAND, 'env', 'GOVERSION'])).trim();
  const stagingDir = await mkdtemp(`${tool.cacheDir}.partial-`);
  try {
    const command = buildable.buildCommand(stagingDir);
    log(`building ${tool.name} ${tool.version} with ${goVersion} (Go's output: ${logPath})`);
    await runLogged({ command: GO_COMMAND, ...command, logPath, log, label: `${tool.name} ${tool.version}` });
    await buildable.finish?.(stagingDir);
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
  const durationMs = Date.now() - startedAt;
  log(`built ${tool.name} ${tool.version} in ${formatDuration(durationMs)}`);
  return { tool, action: 'built', durationMs };
}

/** Reads the build record of a cached tool, e.g. to report how long its build took. */
export async function readBuildRecord(tool: CachedTool): Promise<BuildRecord> {
  return JSON.parse(await readFile(join(tool.cacheDir, BUILD_RECORD_FILE), 'utf8')) as BuildRecord;
}

/**
 * Runs a build with its output written to `logPath`, reporting `building <label> … <elapsed>` (and how many
 * modules Go has downloaded so far) every {@link PROGRESS_INTERVAL_MS}. A failure names the log and quotes its
 * last lines.
 */
async function runLogged(
  input: BuildCommand & { command: string; logPath: string; label: string; log: (line: string) => void },
): Promise<void> {
  const startedAt = Date.now();
  await writeFile(input.logPath, `$ ${[input.command, ...input.args].join(' ')}\n`);
  const logFile = await open(input.logPath, 'a');
  const ticker = setInterval(() => {
    void readFile(input.logPath, 'utf8').then((text) => {
      const downloads = text.split('\n').filter((line) => line.startsWith('go: downloading ')).length;
      const modules = downloads > 0 ? `, ${downloads} modules downloaded` : '';
      input.log(`building ${input.label} … ${formatDuration(Date.now() - startedAt)}${modules}`);
    }, ignoreProgressError);
  }, PROGRESS_INTERVAL_MS);
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(input.command, input.args, {
        cwd: input.cwd,
        env: { ...process.env, ...input.env },
        stdio: ['ignore', logFile.fd, logFile.fd],
      });
      child.on('error', (error) => {
        reject(goSpawnError(input.command, error));
      });
      child.on('exit', (code, signal) => {
        if (code === 0) resolve();
        else reject(new Error(`${input.command} ${input.args.join(' ')} failed (${signal ?? `exit code ${code}`})`));
      });
    });
  } catch (error) {
    const tail = (await readFile(input.logPath, 'utf8')).trimEnd().split('\n').slice(-20).join('\n');
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\nlast lines of ${input.logPath}:\n${tail}`,
      {
        cause: error,
      },
    );
  } finally {
    clearInterval(ticker);
    await logFile.close();
  }
}

/** A progress line that could not be read is skipped; the build goes on. */
function ignoreProgressError(): void {
  return undefined;
}

/** Runs a command (e.g. `go env GOVERSION`) and resolves with its stdout. */
export function captureOutput(
  [command, ...args]: readonly [string, ...string[]],
  options: { cwd?: string } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], cwd: options.cwd });
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
