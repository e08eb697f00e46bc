/**
 * `npm run tools`: builds the test-environment binaries that are not in the cache yet (the Temporal CLI, the
 * kube-apiserver launcher, kustomize, helm and the Compose validator for the deploy tests, and the emulator's Go-SDK
 * conformance driver) and says what it
 * did. Running it again does nothing.
 */
import { ensureTools, formatDuration } from './lib/build-tools.js';
import { CACHE_ROOT } from './lib/tools-config.js';

const startedAt = Date.now();
console.log(`tools: cache ${CACHE_ROOT}`);
try {
  const outcomes = await ensureTools((line) => {
    console.log(`tools: ${line}`);
  });
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
