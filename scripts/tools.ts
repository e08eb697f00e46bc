/**
 * `npm run tools`: builds the test-environment binaries that are not in the cache yet (the Temporal CLI, the
 * kube-apiserver launcher, kustomize, helm and the Compose validator for the deploy tests, and the emulator's Go-SDK
 * conformance driver) and says what it
 * did. Running it again does nothing.
 *
 * `npm run tools -- --temporal postgres` also builds the compose file's Temporal server (temporal-server and
 * temporal-sql-tool) and makes sure PostgreSQL is installed (Debian's package, as root, when missing), for
 * `ENIFLOW_TEST_TEMPORAL=postgres`, `npm run testenv -- --temporal postgres` and `npm test`, whose pretest runs it
 * so (its last suite, `test:temporal-postgres`, runs on that server).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { ensureTools, formatDuration } from './lib/build-tools.js';
import { ensurePostgres } from './lib/postgres.js';
import { parseTemporalServerKind } from './lib/test-servers.js';
import { ensureTemporalServer } from './lib/temporal-server-build.js';
import { CACHE_ROOT, REPO_ROOT } from './lib/tools-config.js';

// `npm test` starts here (pretest): say at once, not after the tool builds, when the tests would run on another
// Node major than .nvmrc's. npm installs that Node for Linux x64/arm64 and macOS x64 (package.json's
// optionalDependencies); elsewhere (macOS on arm64) it is the Node on PATH.
const wantedMajor = readFileSync(join(REPO_ROOT, '.nvmrc'), 'utf8').trim();
if (process.versions.node.split('.')[0] !== wantedMajor) {
  console.error(
    `tools: this is Node ${process.version}, the project runs on Node ${wantedMajor} (.nvmrc). \`npm ci\` ` +
      `installs it on Linux x64/arm64 and macOS x64 and npm scripts run on it; on ${process.platform}-` +
      `${process.arch}, or outside npm, put a Node ${wantedMajor} first on PATH (e.g. \`nvm install\`, which ` +
      `reads .nvmrc) and run again.`,
  );
  process.exit(1);
}

const startedAt = Date.now();
console.log(`tools: cache ${CACHE_ROOT}`);
try {
  const log = (line: string): void => {
    console.log(`tools: ${line}`);
  };
  const flag = process.argv.indexOf('--temporal');
  const temporal = parseTemporalServerKind(flag === -1 ? undefined : (process.argv[flag + 1] ?? '(none)'));
  const outcomes = [...(await ensureTools(log))];
  if (temporal === 'postgres') {
    log(`PostgreSQL: ${await ensurePostgres(log)}`);
    outcomes.push(await ensureTemporalServer(log));
  }
  for (const { tool, action, durationMs } of outcomes) {
    const what = action === 'built' ? `built in ${formatDuration(durationMs)}` : 'already built';
    console.log(`tools: ${tool.name} ${tool.version}: ${what} (${tool.binaryPath})`);
  }
  const builtCount = outcomes.filter((outcome) => outcome.action === 'built').length;
  const summary = builtCount === 0 ? 'nothing to do, every tool is cached' : `built ${builtCount} tool(s)`;
  console.log(`tools: ${summary} (${formatDuration(Date.now() - startedAt)})`);
} catch (error) {
  console.error(`tools: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
