/**
 * Starts the servers integration tests run against (one of each per test run) and stops them again. Used by
 * `npm run testenv` and `scripts/with-testenv.ts`.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatDuration } from './build-tools.js';
import { kubeApiserver } from './kube-test-server.js';
import { temporalDevServer } from './temporal-dev-server.js';
/**
 * The servers of the test environment. To add one (e.g. the ECS emulator), implement TestServerDefinition in
 * its own module under scripts/lib/ and append it here; testenv, with-testenv and the leak test pick it up.
 */
export const TEST_SERVER_DEFINITIONS = [temporalDevServer, kubeApiserver];
/** Starts every server not reused from the environment, in parallel; on failure stops those already up. */
export async function startTestServers(options) {
    const startedAt = Date.now();
    const definitions = options.definitions ?? TEST_SERVER_DEFINITIONS;
    const runDir = await mkdtemp(join(tmpdir(), 'eniflow-testenv-'));
    const reusedEnv = {};
    const toStart = [];
    for (const definition of definitions) {
        const values = definition.envVarNames.map((name) => options.reuseFrom?.[name]);
        if (options.reuseFrom !== undefined && values.every((value) => value !== undefined && value !== '')) {
            for (const [index, name] of definition.envVarNames.entries())
                reusedEnv[name] = values[index] ?? '';
            options.log(`${definition.name}: reusing the server given by ${definition.envVarNames.join(', ')}`);
        }
        else {
            toStart.push(definition);
        }
    }
    const results = await Promise.allSettled(toStart.map((definition) => definition.start({ runDir, log: options.log })));
    const running = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
    if (failures.length > 0) {
        await Promise.allSettled(running.map((server) => server.stop()));
        throw new AggregateError(failures, `could not start the test servers (logs kept in ${runDir})`);
    }
    if (running.length > 0) {
        options.log(`test servers up in ${formatDuration(Date.now() - startedAt)} (logs in ${runDir})`);
    }
    let stopping;
    return {
        env: Object.assign({}, reusedEnv, ...running.map((server) => server.env)),
        servers: definitions.map((definition) => summarize(definition, running)),
        runDir,
        stop: (stopOptions) => {
            stopping ??= stopAll(running, { runDir, keepLogs: stopOptions?.keepLogs === true });
            return stopping;
        },
        firstExit: Promise.race(running.map((server) => server.exited.then((how) => `${server.name} exited (${how})`))),
    };
}
function summarize(definition, running) {
    const server = running.find((candidate) => candidate.name === definition.name);
    return server === undefined
        ? { name: definition.name, startedHere: false }
        : { name: definition.name, startedHere: true, details: server.details };
}
async function stopAll(running, { runDir, keepLogs }) {
    const results = await Promise.allSettled(running.map((server) => server.stop()));
    const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
    if (failures.length > 0) {
        throw new AggregateError(failures, `could not stop every test server (logs kept in ${runDir})`);
    }
    // With every server reused and no test log written, the directory is empty: nothing to keep.
    if (!keepLogs || (await readdir(runDir)).length === 0)
        await rm(runDir, { recursive: true, force: true });
}
/** `export NAME='value'` lines for a POSIX shell. */
export function exportLines(env) {
    return Object.entries(env).map(([name, value]) => `export ${name}='${value.replaceAll("'", `'\\''`)}'`);
}
/** An error's message; for a failed start, the message of every server that failed, one per line. */
export function describeError(error) {
    if (error instanceof AggregateError) {
        return [error.message, ...error.errors.map((inner) => describeError(inner))].join('\n');
    }
    return error instanceof Error ? error.message : String(error);
}
