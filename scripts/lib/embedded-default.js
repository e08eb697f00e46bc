/**
 * The embedded default of `npm start`: with no configuration, eniflow runs on a local Temporal dev server, the
 * test kube-apiserver and the ECS emulator (demo fixture), builds the tools first if missing, creates a demo
 * cluster, and shows a live one-screen summary until Ctrl-C; then it stops everything it started.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { startEcsEmulator } from '../../src/ecs-emulator/index.js';
import { TEST_ENV_VARS } from './test-env-vars.js';
import { ensureTools } from './build-tools.js';
import { createDemoCluster, formatDemoSummary, summarizeDemo } from './demo-cluster.js';
import { describeError, startTestServers } from './test-servers.js';
/** Runs the embedded default until `stopRequested` settles, then stops everything it started. */
export async function runEmbeddedDefault(options) {
    const { log } = options;
    log('no configuration given: running on the embedded default (local Temporal, kube-apiserver, ECS emulator)');
    await ensureTools(log, 'servers');
    let servers;
    let emulator;
    const roles = [];
    try {
        servers = await startTestServers({ log });
        emulator = await startEcsEmulator({});
        log(`ECS emulator on ${emulator.endpoint} (region ${emulator.regionId})`);
        const kubeconfigPath = servers.env[TEST_ENV_VARS.kubeconfig] ?? '';
        const kubeConfig = new KubeConfig();
        kubeConfig.loadFromFile(kubeconfigPath);
        const environment = {
            temporalAddress: servers.env[TEST_ENV_VARS.temporalAddress] ?? '',
            temporalNamespace: servers.env[TEST_ENV_VARS.temporalNamespace] ?? 'default',
            temporalUiUrl: servers.env[TEST_ENV_VARS.temporalUiUrl] ?? '',
            kubeconfigPath,
            kubeConfig,
            emulator,
        };
        const cluster = await createDemoCluster({ kubeConfig, emulator });
        log(`demo cluster: ${cluster.nodeNames.length} nodes, ${cluster.podCount} pods (namespace demo)`);
        log(`Temporal Web UI: ${environment.temporalUiUrl}  (find a node: NodeName = "${cluster.nodeNames[0] ?? ''}")`);
        log(`kubectl: KUBECONFIG=${kubeconfigPath} kubectl get nodes.network.alibabacloud.com`);
        roles.push(...(await options.startRoles(environment)));
        log(`running: ${roles.map((role) => role.name).join(', ')}; Ctrl-C to stop`);
        let announced = false;
        const stopped = options.stopRequested.then((reason) => reason);
        for (;;) {
            const summary = await summarizeDemo({ kubeConfig, emulator, nodeNames: cluster.nodeNames }).catch((error) => ({ error: describeError(error) }));
            if ('error' in summary)
                log(`summary unavailable: ${summary.error}`);
            else {
                const lines = formatDemoSummary(summary);
                if (options.interactive) {
                    // A redraw clears the screen, so it repeats what the user needs: where the UI is and how to stop.
                    const header = [
                        `eniflow on the embedded default — Temporal Web UI ${environment.temporalUiUrl} — Ctrl-C to stop`,
                        `kubectl: KUBECONFIG=${kubeconfigPath} kubectl get nodes.network.alibabacloud.com`,
                        '',
                    ];
                    const status = `${summary.podsWithIp}/${summary.podCount} demo pods have IPs`;
                    process.stdout.write(`\x1b[H\x1b[2J${[...header, ...lines, '', status].join('\n')}\n`);
                }
                else if (!announced)
                    for (const line of lines)
                        log(line);
                if (!announced && summary.podsWithIp === summary.podCount) {
                    announced = true;
                    log(`demo ready: all ${summary.podCount} pods have IPs`);
                    if (!options.interactive)
                        for (const line of lines)
                            log(line);
                }
            }
            const next = new Promise((resolve) => {
                setTimeout(() => {
                    resolve(undefined);
                }, options.summaryIntervalMs ?? 2_000);
            });
            const reason = await Promise.race([stopped, next]);
            if (reason !== undefined) {
                log(`stopping (${reason})`);
                break;
            }
        }
    }
    finally {
        for (const role of [...roles].reverse()) {
            await role.stop().catch((error) => {
                log(`stopping ${role.name} failed: ${describeError(error)}`);
            });
        }
        await emulator?.close();
        await servers?.stop();
        log('stopped everything it started');
    }
}
