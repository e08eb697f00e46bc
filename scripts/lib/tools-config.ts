/**
 * Where the test-environment tools live and which versions they are: the one place `npm run tools`,
 * `npm run testenv`, `scripts/with-testenv.ts` and the deploy tests read them from.
 *
 * Binaries are cached outside the work tree, keyed by tool and version, so every clone on a machine shares one
 * build and a new machine builds its own.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is scripts/lib/tools-config.ts). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** `${XDG_CACHE_HOME:-$HOME/.cache}/eniflow`: the root of every cached tool build. */
export const CACHE_ROOT = join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'eniflow');

/** The Go toolchain command; `GO` overrides it, e.g. `GO=/usr/local/go/bin/go`. */
export const GO_COMMAND = process.env['GO'] ?? 'go';

/** A tool built from the Go module proxy into its own cache directory. */
export interface CachedTool {
  /** Short name used in messages, e.g. `temporal-cli`. */
  readonly name: string;
  /** The upstream version the binary is built from. */
  readonly version: string;
  /** Directory holding the binary and its build record; its name is the cache key. */
  readonly cacheDir: string;
  readonly binaryPath: string;
}

/**
 * The Temporal CLI, whose `server start-dev` is the real Temporal server (1.29.1) with the Web UI.
 * v1.5.1 is the newest tag without replace directives in its go.mod, which `go install pkg@version` refuses.
 */
export const TEMPORAL_CLI = {
  name: 'temporal-cli',
  version: 'v1.5.1',
  goPackage: 'github.com/temporalio/cli/cmd/temporal',
  cacheDir: join(CACHE_ROOT, 'temporal-cli-v1.5.1'),
  binaryPath: join(CACHE_ROOT, 'temporal-cli-v1.5.1', 'temporal'),
} as const satisfies CachedTool & { goPackage: string };

/**
 * The Temporal server as `temporal/docker-compose.yml` runs it (`temporalio/server`, `temporalio/admin-tools`), built
 * from the module at the compose file's release: `temporal-server` (cmd/server) and `temporal-sql-tool`
 * (cmd/tools/sql), with the module's PostgreSQL schema files (schema/postgresql/v12) copied beside them. Built by
 * `npm run tools -- --temporal postgres`, which `npm test`'s pretest runs (plain `npm run tools` skips it).
 */
export const TEMPORAL_SERVER = {
  name: 'temporal-server',
  version: 'v1.30.1',
  goModule: 'go.temporal.io/server',
  cacheDir: join(CACHE_ROOT, 'temporal-server-v1.30.1'),
  binaryPath: join(CACHE_ROOT, 'temporal-server-v1.30.1', 'temporal-server'),
  sqlToolPath: join(CACHE_ROOT, 'temporal-server-v1.30.1', 'temporal-sql-tool'),
  /** Holds `temporal/versioned` and `visibility/versioned`, as /etc/temporal/schema/postgresql/v12 in admin-tools. */
  postgresSchemaDir: join(CACHE_ROOT, 'temporal-server-v1.30.1', 'schema', 'postgresql', 'v12'),
} as const satisfies CachedTool & { goModule: string; sqlToolPath: string; postgresSchemaDir: string };

/** The Go module under tools/kube-apiserver that builds kube-apiserver with etcd embedded. */
export const KUBE_APISERVER_SOURCE_DIR = join(REPO_ROOT, 'tools', 'kube-apiserver');

/** The Kubernetes release the launcher pins (its go.mod must agree; see tools/kube-apiserver/update-go-mod.sh). */
export const KUBERNETES_VERSION = 'v1.36.3';

/**
 * The kube-apiserver launcher. Its cache key adds a digest of the launcher's sources (Go files, go.mod, go.sum)
 * to the Kubernetes version, so editing the launcher builds a new binary instead of reusing a stale one.
 */
export function kubeApiserverTool(): CachedTool {
  return sourceBuiltTool({
    name: 'kube-apiserver',
    version: KUBERNETES_VERSION,
    sourceDir: KUBE_APISERVER_SOURCE_DIR,
    binaryName: 'kube-apiserver-testenv',
  });
}

/**
 * kustomize, which renders deploy/ in the deploy tests (what `kubectl kustomize` runs). v5.8.2 is the newest
 * release whose go.mod asks for go 1.26.0 (v5.8.3 needs go 1.27).
 */
export const KUSTOMIZE = goInstalledTool({
  name: 'kustomize',
  version: 'v5.8.2',
  goPackage: 'sigs.k8s.io/kustomize/kustomize/v5',
  binaryName: 'kustomize',
});

/** Helm, which renders deploy/helm/eniflow in the deploy tests (`helm template`, `helm lint`). */
export const HELM = goInstalledTool({
  name: 'helm',
  version: 'v4.3.2',
  goPackage: 'helm.sh/helm/v4/cmd/helm',
  binaryName: 'helm',
});

/** The Go module under tools/compose-config: compose-go, the loader behind `docker compose config`. */
export const COMPOSE_CONFIG_SOURCE_DIR = join(REPO_ROOT, 'tools', 'compose-config');

/** The compose-go release tools/compose-config/go.mod pins (v2.17.0 needs a newer Go than 1.26). */
export const COMPOSE_GO_VERSION = 'v2.16.2';

/** The Compose validator, keyed like the kube-apiserver launcher by the compose-go version and a source digest. */
export function composeConfigTool(): CachedTool {
  return sourceBuiltTool({
    name: 'compose-config',
    version: COMPOSE_GO_VERSION,
    sourceDir: COMPOSE_CONFIG_SOURCE_DIR,
    binaryName: 'compose-config',
  });
}

function goInstalledTool(input: {
  name: string;
  version: string;
  goPackage: string;
  binaryName: string;
}): CachedTool & { readonly goPackage: string } {
  const cacheDir = join(CACHE_ROOT, `${input.name}-${input.version}`);
  return {
    name: input.name,
    version: input.version,
    goPackage: input.goPackage,
    cacheDir,
    binaryPath: join(cacheDir, input.binaryName),
  };
}

function sourceBuiltTool(input: { name: string; version: string; sourceDir: string; binaryName: string }): CachedTool {
  const cacheDir = join(CACHE_ROOT, `${input.name}-${input.version}-${sourceDigest(input.sourceDir)}`);
  return {
    name: input.name,
    version: input.version,
    cacheDir,
    binaryPath: join(cacheDir, input.binaryName),
  };
}

function sourceDigest(sourceDir: string): string {
  const hash = createHash('sha256');
  const files = readdirSync(sourceDir)
    .filter((file) => file.endsWith('.go') || file === 'go.mod' || file === 'go.sum')
    .sort();
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(sourceDir, file)));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 12);
}

/** The Go module under tools/ecs-sdk-conformance that drives the ECS emulator through the official Go SDK. */
export const ECS_SDK_CONFORMANCE_SOURCE_DIR = join(REPO_ROOT, 'tools', 'ecs-sdk-conformance');

/** The `github.com/alibabacloud-go/ecs-20140526/v7` release its go.mod pins (the test checks they agree). */
export const ECS_GO_SDK_VERSION = 'v7.7.0';

/**
 * The Go-SDK conformance driver for the ECS emulator (test/emulator/go-sdk-conformance.test.ts). Its cache key
 * is a digest of its sources, go.mod and go.sum, so a change of program or pinned SDK builds a new binary.
 */
export function ecsSdkConformanceTool(): CachedTool {
  return sourceBuiltTool({
    name: 'ecs-sdk-conformance',
    version: ECS_GO_SDK_VERSION,
    sourceDir: ECS_SDK_CONFORMANCE_SOURCE_DIR,
    binaryName: 'ecs-sdk-conformance',
  });
}

/** Name of the record written next to a binary once its build has completed. */
export const BUILD_RECORD_FILE = 'build-record.json';

/** What {@link BUILD_RECORD_FILE} holds. */
export interface BuildRecord {
  readonly tool: string;
  readonly version: string;
  readonly goVersion: string;
  readonly builtAt: string;
  readonly buildDurationMs: number;
  readonly command: readonly string[];
}
