/**
 * What one Node CR read and status write cost the worker's process, client-node's generated path against the lean
 * request the activities use (src/kube/kube-json.ts): the same kubeconfig (pooled connections as the worker's), the
 * same apiserver, the same object, alternating rounds; prints CPU (process.cpuUsage: user + system, every thread)
 * per status write: a GET and a PUT each way, and the lean PUT alone (the write's base from the worker's read cache).
 * Needs the test apiserver:
 *
 *   node --import tsx scripts/with-testenv.ts --only=kube node --import tsx bench/kube-request-cost.ts [-- --pairs 300]
 */
import { parseArgs } from 'node:util';

import { CustomObjectsApi } from '@kubernetes/client-node';

import { NODE_CR_GROUP, NODE_CR_PLURAL, NODE_CR_VERSION } from '../src/ipam/index.js';
import { kubeJsonRequest } from '../src/kube/kube-json.js';
import { withPooledConnections } from '../src/kube/pooled-connections.js';
import { createNodeCr, kubeConfigFromTestEnv } from '../test/support/kube-env.js';

const { values } = parseArgs({
  options: { pairs: { type: 'string', default: '300' }, rounds: { type: 'string', default: '3' } },
});
const pairs = Number(values.pairs);
const kubeConfig = withPooledConnections(kubeConfigFromTestEnv());
const custom = kubeConfig.makeApiClient(CustomObjectsApi);
const name = `bench-kube-cost-${process.pid}`;
const ref = { group: NODE_CR_GROUP, version: NODE_CR_VERSION, plural: NODE_CR_PLURAL, name };
const path = `/apis/${NODE_CR_GROUP}/${NODE_CR_VERSION}/${NODE_CR_PLURAL}/${name}`;
await createNodeCr({ kubeConfig, core: undefined as never, customObjects: custom }, { name });

type Raw = Record<string, unknown> & { status?: Record<string, unknown> };
// A status the size of a 40 × 20 node's: two ENIs of 15 addresses.
function statusOf(round: number): Record<string, unknown> {
  const networkInterfaces: Record<string, unknown> = {};
  for (const eni of [1, 2]) {
    const ipv4: Record<string, unknown> = {};
    for (let i = 0; i < 15; i++) {
      const ip = `10.${eni}.0.${i + 10}`;
      ipv4[ip] = {
        ip,
        status: 'Valid',
        primary: i === 0,
        podID: `default/pod-${eni}-${i}-${round}`,
        podUID: `uid-${i}`,
      };
    }
    networkInterfaces[`eni-${eni}`] = {
      id: `eni-${eni}`,
      status: 'InUse',
      macAddress: `00:16:3e:00:00:0${eni}`,
      vSwitchID: 'vsw-1',
      ipv4,
    };
  }
  return { networkInterfaces };
}

const clientNode = async (round: number): Promise<void> => {
  const raw = (await custom.getClusterCustomObject(ref)) as Raw;
  await custom.replaceClusterCustomObjectStatus({ ...ref, body: { ...raw, status: statusOf(round) } });
};
const lean = async (round: number): Promise<void> => {
  const signal = () => AbortSignal.any([new AbortController().signal, AbortSignal.timeout(30_000)]);
  const raw = (await kubeJsonRequest(kubeConfig, { method: 'GET', path, signal: signal() })) as Raw;
  await kubeJsonRequest(kubeConfig, {
    method: 'PUT',
    path: `${path}/status`,
    body: { ...raw, status: statusOf(round) },
    signal: signal(),
  });
};

// As a status write with its base from the read cache: no GET, the last written object is the next base.
let base: Raw | undefined;
const leanPutOnly = async (round: number): Promise<void> => {
  const signal = () => AbortSignal.any([new AbortController().signal, AbortSignal.timeout(30_000)]);
  base ??= (await kubeJsonRequest(kubeConfig, { method: 'GET', path, signal: signal() })) as Raw;
  base = (await kubeJsonRequest(kubeConfig, {
    method: 'PUT',
    path: `${path}/status`,
    body: { ...base, status: statusOf(round) },
    signal: signal(),
  })) as Raw;
};

async function measure(run: (round: number) => Promise<void>): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < pairs; i++) await run(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / pairs;
}

// Warm both paths (connections, JIT) before measuring.
await measure(clientNode);
await measure(lean);
await measure(leanPutOnly);
const results: Record<string, number[]> = { 'client-node': [], lean: [], 'lean PUT only': [] };
for (let round = 0; round < Number(values.rounds); round++) {
  results['client-node']?.push(await measure(clientNode));
  results['lean']?.push(await measure(lean));
  base = undefined;
  results['lean PUT only']?.push(await measure(leanPutOnly));
}
await custom.deleteClusterCustomObject(ref);
for (const [way, ms] of Object.entries(results)) {
  console.log(`${way.padEnd(14)} CPU ms per status write: ${ms.map((value) => value.toFixed(3)).join(' / ')}`);
}
