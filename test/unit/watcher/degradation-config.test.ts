import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ConfigError } from '../../../src/config.js';
import { controlConfigMapOf, loadWatcherConfig } from '../../../src/watcher/watcher-config.js';

describe('degradation configuration', () => {
  const CLUSTER = { ENIFLOW_CLUSTER_ID: 'c-test' };

  it('defaults to no degradation and the ConfigMap eniflow-control in the lease namespace', () => {
    assert.deepEqual(loadWatcherConfig(CLUSTER).degradation, {
      level: 'off',
      configMap: { namespace: 'kube-system', name: 'eniflow-control' },
    });
    assert.deepEqual(loadWatcherConfig({ ...CLUSTER, LEASE_NAMESPACE: 'eniflow-system' }).degradation?.configMap, {
      namespace: 'eniflow-system',
      name: 'eniflow-control',
    });
  });

  it('takes ENIFLOW_DEGRADATION and ENIFLOW_CONTROL_CONFIGMAP', () => {
    assert.deepEqual(
      loadWatcherConfig({ ...CLUSTER, ENIFLOW_DEGRADATION: 'L1', ENIFLOW_CONTROL_CONFIGMAP: 'ops/switches' })
        .degradation,
      { level: 'l1', configMap: { namespace: 'ops', name: 'switches' } },
    );
  });

  it('refuses a level that is not one, and a ConfigMap that is not namespace/name, listing both', () => {
    assert.throws(
      () => loadWatcherConfig({ ...CLUSTER, ENIFLOW_DEGRADATION: 'l2', ENIFLOW_CONTROL_CONFIGMAP: 'only-a-name' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.problems, [
          'ENIFLOW_DEGRADATION must be "l0", "l1" or "off" (or empty), got "l2"',
          'ENIFLOW_CONTROL_CONFIGMAP must be namespace/name (DNS names), got "only-a-name"',
        ]);
        return true;
      },
    );
  });

  it('gives the CLI the same ConfigMap as the watcher', () => {
    const problems: string[] = [];
    assert.deepEqual(controlConfigMapOf({}, problems), { namespace: 'kube-system', name: 'eniflow-control' });
    assert.deepEqual(controlConfigMapOf({ LEASE_NAMESPACE: 'eniflow-system' }, problems), {
      namespace: 'eniflow-system',
      name: 'eniflow-control',
    });
    assert.deepEqual(controlConfigMapOf({ ENIFLOW_CONTROL_CONFIGMAP: 'a/b/c' }, problems).name, 'b');
    assert.equal(problems.length, 1);
  });
});
