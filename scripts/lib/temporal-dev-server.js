/**
 * The Temporal test server: `temporal server start-dev` from the cached CLI (real Temporal server 1.29.1,
 * in-memory SQLite unless a database file is given, Web UI), on loopback ports chosen here or given.
 */
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { DEFAULT_ECS_BURST, serverMinBurstSize } from '../../src/shared/ecs-budget.js';
import { isToolCached } from './build-tools.js';
import { reserveFreePorts } from './free-ports.js';
import { ManagedProcess, describeExit } from './managed-process.js';
import { pollUntil } from './poll-until.js';
import { TEST_ENV_VARS } from './test-env-vars.js';
import { TEMPORAL_CLI } from './tools-config.js';
export const TEMPORAL_TEST_NAMESPACE = 'default';
/**
 * Custom search attributes registered at start, by name and CLI type. test/support/temporal-env.ts declares
 * the matching typed keys.
 */
export const TEMPORAL_SEARCH_ATTRIBUTES = {
    NodeName: 'Keyword',
    InstanceId: 'Keyword',
    IpamState: 'Keyword',
    EniflowErrorCode: 'Keyword',
    EniflowErrorSince: 'Datetime',
    EniflowExhaustedVSwitches: 'KeywordList',
};
/**
 * Dynamic config for the dev server. The version check would call temporal.io (no internet here); the
 * update settings match what `@temporalio/testing`'s createLocal passes. The ECS queues' burst is added per server
 * (see {@link TemporalDevServerOptions.ecsBurst}).
 */
const DYNAMIC_CONFIG = [
    'frontend.enableServerVersionCheck=false',
    'frontend.enableUpdateWorkflowExecution=true',
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
];
const READY_TIMEOUT_MS = 60_000;
/**
 * Starts a dev server and resolves once it is ready. The shared test server calls it with no options; a test that
 * kills and restarts its own server passes a database file and the ports of the first start.
 */
export async function startTemporalDevServer({ runDir, log }, options = {}) {
    if (!(await isToolCached(TEMPORAL_CLI))) {
        throw new Error(`The Temporal CLI is not built (${TEMPORAL_CLI.binaryPath}). Run \`npm run tools\` first.`);
    }
    if (options.ports !== undefined)
        return launchTemporalDevServer({ runDir, log }, options, options.ports);
    // Ports free a moment ago may be taken before the server binds them (another server of the run starting beside
    // it): such a start is tried again on new ports, a few times.
    for (let attempt = 1;; attempt++) {
        const [grpc, ui, http, metrics] = await (options.reservePorts ?? reserveFreePorts)(4);
        if (grpc === undefined || ui === undefined || http === undefined || metrics === undefined) {
            throw new Error('could not reserve ports for the Temporal dev server');
        }
        try {
            return await launchTemporalDevServer({ runDir, log }, options, { grpc, ui, http, metrics });
        }
        catch (error) {
            if (attempt >= PORT_RACE_ATTEMPTS || !isPortTaken(error))
                throw error;
            log(`temporal: a reserved port was taken before the server bound it; starting again on new ports`);
        }
    }
}
const PORT_RACE_ATTEMPTS = 3;
/** Whether a start failed because one of its ports was bound by someone else first. */
export function isPortTaken(error) {
    return error instanceof Error && /address already in use/i.test(error.message);
}
async function launchTemporalDevServer({ runDir, log }, options, ports) {
    const { grpc: grpcPort, ui: uiPort, http: httpPort, metrics: metricsPort } = ports;
    const address = `127.0.0.1:${grpcPort}`;
    const uiUrl = `http://127.0.0.1:${uiPort}`;
    const args = [
        'server',
        'start-dev',
        '--ip',
        '127.0.0.1',
        '--port',
        String(grpcPort),
        '--ui-port',
        String(uiPort),
        '--http-port',
        String(httpPort),
        '--metrics-port',
        String(metricsPort),
        '--namespace',
        TEMPORAL_TEST_NAMESPACE,
        '--log-level',
        'error',
        ...Object.entries(TEMPORAL_SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
        ...[
            ...DYNAMIC_CONFIG,
            `matching.minTaskThrottlingBurstSize=${serverMinBurstSize(options.ecsBurst ?? DEFAULT_ECS_BURST)}`,
        ].flatMap((setting) => ['--dynamic-config-value', setting]),
        ...(options.dbFilename === undefined ? [] : ['--db-filename', options.dbFilename]),
    ];
    const server = new ManagedProcess({
        name: 'temporal',
        command: TEMPORAL_CLI.binaryPath,
        args,
        logPath: join(runDir, options.logName ?? 'temporal.log'),
    });
    // A server that exited is not waited for: its probes stop with it.
    const exited = new AbortController();
    void server.exited.then(() => {
        exited.abort(new Error('the Temporal dev server exited'));
    });
    try {
        await server.unlessExited(waitUntilTemporalReady({ address, uiUrl, signal: exited.signal }));
    }
    catch (error) {
        await server.stop();
        throw error;
    }
    log(`temporal: ${address} (Web UI ${uiUrl}), pid ${server.pid}`);
    return {
        name: 'temporal',
        env: {
            [TEST_ENV_VARS.temporalAddress]: address,
            [TEST_ENV_VARS.temporalNamespace]: TEMPORAL_TEST_NAMESPACE,
            [TEST_ENV_VARS.temporalUiUrl]: uiUrl,
        },
        details: {
            address,
            namespace: TEMPORAL_TEST_NAMESPACE,
            uiUrl,
            httpApiUrl: `http://127.0.0.1:${httpPort}`,
            metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
            pid: server.pid,
            ports: [grpcPort, uiPort, httpPort, metricsPort],
            logPath: server.logPath,
        },
        stop: async () => {
            await server.stop();
        },
        exited: server.exited.then(describeExit),
    };
}
/**
 * Ready means: the frontend answers for the test namespace, the custom search attributes are registered and
 * the Web UI serves its page.
 */
async function waitUntilTemporalReady({ address, uiUrl, signal, }) {
    const connection = await pollUntil(() => Connection.connect({ address, connectTimeout: 1000 }), {
        description: `the Temporal frontend at ${address}`,
        timeoutMs: READY_TIMEOUT_MS,
        intervalMs: 200,
        signal,
    });
    try {
        await pollUntil(async () => {
            await connection.workflowService.describeNamespace({ namespace: TEMPORAL_TEST_NAMESPACE });
            const { customAttributes } = await connection.operatorService.listSearchAttributes({
                namespace: TEMPORAL_TEST_NAMESPACE,
            });
            const registered = Object.keys(customAttributes ?? {});
            return Object.keys(TEMPORAL_SEARCH_ATTRIBUTES).every((name) => registered.includes(name)) ? true : undefined;
        }, {
            description: `namespace ${TEMPORAL_TEST_NAMESPACE} with its search attributes`,
            timeoutMs: READY_TIMEOUT_MS,
            signal,
        });
    }
    finally {
        await connection.close();
    }
    await pollUntil(async () => ((await fetch(uiUrl)).ok ? true : undefined), {
        description: `the Temporal Web UI at ${uiUrl}`,
        timeoutMs: READY_TIMEOUT_MS,
        signal,
    });
}
export const temporalDevServer = {
    name: 'temporal',
    envVarNames: [TEST_ENV_VARS.temporalAddress, TEST_ENV_VARS.temporalNamespace],
    start: (context) => startTemporalDevServer(context),
};
