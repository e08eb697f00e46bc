/**
 * Builds the Temporal server of temporal/docker-compose.yml into the tool cache: `temporal-server` and
 * `temporal-sql-tool` from `go.temporal.io/server` at the compose file's release, plus that release's PostgreSQL
 * schema files from the Go module cache (what admin-tools ships under /etc/temporal/schema).
 */
import { cp, rename } from 'node:fs/promises';
import { join } from 'node:path';

import { captureOutput, ensureTool } from './build-tools.js';
import type { BuildableTool, ToolOutcome } from './build-tools.js';
import { CACHE_ROOT, GO_COMMAND, TEMPORAL_SERVER } from './tools-config.js';

/** Package → the binary name the images give it. */
const BINARIES = [
  { goPackage: `${TEMPORAL_SERVER.goModule}/cmd/server`, installedAs: 'server', binary: 'temporal-server' },
  { goPackage: `${TEMPORAL_SERVER.goModule}/cmd/tools/sql`, installedAs: 'sql', binary: 'temporal-sql-tool' },
] as const;

function temporalServerBuild(): BuildableTool {
  return {
    tool: TEMPORAL_SERVER,
    scope: 'extra',
    // Both packages of one module version in one `go install`: one module download, one dependency build. The
    // server's version is a constant in its source (headers.ServerVersion), so no stamp is needed; CGO off as in
    // the release images (SQLite is pure Go there).
    buildCommand: (outputDir) => ({
      args: [
        'install',
        '-trimpath',
        '-ldflags',
        '-s -w',
        ...BINARIES.map(({ goPackage }) => `${goPackage}@${TEMPORAL_SERVER.version}`),
      ],
      cwd: CACHE_ROOT,
      env: { GOBIN: outputDir, CGO_ENABLED: '0' },
    }),
    finish: async (outputDir) => {
      for (const { installedAs, binary } of BINARIES) {
        await rename(join(outputDir, installedAs), join(outputDir, binary));
      }
      const moduleDir = await temporalServerModuleDir();
      await cp(join(moduleDir, 'schema', 'postgresql', 'v12'), join(outputDir, 'schema', 'postgresql', 'v12'), {
        recursive: true,
      });
    },
  };
}

/** The module's source in the Go module cache (downloaded already by the build; `go mod download` only looks). */
async function temporalServerModuleDir(): Promise<string> {
  const json = await captureOutput(
    [GO_COMMAND, 'mod', 'download', '-json', `${TEMPORAL_SERVER.goModule}@${TEMPORAL_SERVER.version}`],
    { cwd: CACHE_ROOT },
  );
  const { Dir: dir } = JSON.parse(json) as { Dir?: string };
  if (dir === undefined) throw new Error(`go mod download did not name the directory of ${TEMPORAL_SERVER.goModule}`);
  return dir;
}

/** Builds the server and its SQL tool unless they are cached. */
export function ensureTemporalServer(log: (line: string) => void): Promise<ToolOutcome> {
  return ensureTool(temporalServerBuild(), log);
}
