/**
 * The Kubernetes test server: the cached kube-apiserver launcher (tools/kube-apiserver: kube-apiserver with
 * etcd embedded, loopback only, RBAC, static admin token), with every CRD from deploy/crd/ installed and
 * Established.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiextensionsV1Api, KubeConfig, loadAllYaml } from '@kubernetes/client-node';
import { isToolCached } from './build-tools.js';
import { ManagedProcess, describeExit } from './managed-process.js';
import { pollUntil } from './poll-until.js';
import { TEST_ENV_VARS } from './test-env-vars.js';
import { REPO_ROOT, kubeApiserverTool } from './tools-config.js';
/** Every YAML file in this directory is applied at start. */
export const CRD_DIR = join(REPO_ROOT, 'deploy', 'crd');
/** A cold start takes a few seconds on 2 cores; the margin covers a loaded CI machine. */
const READY_TIMEOUT_MS = 120_000;
const CRD_ESTABLISHED_TIMEOUT_MS = 60_000;
async function startKubeApiserver({ runDir, log }) {
    const tool = kubeApiserverTool();
    if (!(await isToolCached(tool))) {
        throw new Error(`The kube-apiserver launcher for the current tools/kube-apiserver sources is not built (${tool.binaryPath}). ` +
            'Run `npm run tools` first.');
    }
    const server = new ManagedProcess({
        name: 'kube-apiserver',
        command: tool.binaryPath,
        args: [
            `-state-dir=${join(runDir, 'kube-apiserver')}`,
            `-ready-timeout=${READY_TIMEOUT_MS / 1000}s`,
            // Shut down when our end of stdin closes, i.e. when this Node process is gone for any reason.
            '-exit-on-stdin-eof',
        ],
        logPath: join(runDir, 'kube-apiserver.log'),
        holdStdinOpen: true,
    });
    let ready;
    try {
        const line = await server.waitForStdoutLine((text) => text.startsWith('{'), READY_TIMEOUT_MS + 10_000);
        ready = JSON.parse(line);
        const installed = await installCrds(kubeConfigFor(ready));
        log(`kube-apiserver: ${ready.url} (${ready.version}), pid ${server.pid}, CRDs Established: ${installed.join(', ')}`);
    }
    catch (error) {
        await server.stop();
        throw error;
    }
    return {
        name: 'kube-apiserver',
        env: {
            [TEST_ENV_VARS.kubeServer]: ready.url,
            [TEST_ENV_VARS.kubeCaFile]: ready.caFile,
            [TEST_ENV_VARS.kubeToken]: ready.token,
            [TEST_ENV_VARS.kubeconfig]: ready.kubeconfig,
        },
        details: {
            url: ready.url,
            version: ready.version,
            caFile: ready.caFile,
            caData: ready.caData,
            token: ready.token,
            kubeconfig: ready.kubeconfig,
            etcdUrl: ready.etcdUrl,
            pid: server.pid,
            ports: [new URL(ready.url).port, new URL(ready.etcdUrl).port].map(Number),
            logPath: server.logPath,
        },
        stop: async () => {
            await server.stop();
        },
        exited: server.exited.then(describeExit),
    };
}
function kubeConfigFor(ready) {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(ready.kubeconfig);
    return kubeConfig;
}
/** Creates every CRD found in {@link CRD_DIR} and waits until each is Established; returns their names. */
async function installCrds(kubeConfig) {
    const api = kubeConfig.makeApiClient(ApiextensionsV1Api);
    const files = (await readdir(CRD_DIR)).filter((file) => /\.ya?ml$/.test(file)).sort();
    const crds = [];
    for (const file of files) {
        const documents = loadAllYaml(await readFile(join(CRD_DIR, file), 'utf8'));
        for (const document of documents) {
            if (isCrd(document))
                crds.push(document);
        }
    }
    for (const crd of crds) {
        await api.createCustomResourceDefinition({ body: crd });
    }
    const names = crds.map((crd) => crd.metadata?.name ?? '(unnamed)');
    await Promise.all(names.map((name) => pollUntil(async () => {
        const crd = await api.readCustomResourceDefinition({ name });
        const established = crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
        return established === true ? true : undefined;
    }, { description: `CRD ${name} to be Established`, timeoutMs: CRD_ESTABLISHED_TIMEOUT_MS })));
    return names;
}
function isCrd(document) {
    return (typeof document === 'object' &&
        document !== null &&
        'kind' in document &&
        document.kind === 'CustomResourceDefinition');
}
export const kubeApiserver = {
    name: 'kube-apiserver',
    envVarNames: [TEST_ENV_VARS.kubeServer, TEST_ENV_VARS.kubeCaFile, TEST_ENV_VARS.kubeToken],
    start: startKubeApiserver,
};
