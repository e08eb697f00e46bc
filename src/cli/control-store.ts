/** The control ConfigMap the `eniflow degradation` command reads and writes (its `degradation` key). */
import { ApiException, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { CoreV1Api } from '@kubernetes/client-node';

import { DEGRADATION_KEY } from '../watcher/watcher-config.js';

/** Reads and writes the `degradation` key of the control ConfigMap. */
export interface ControlStore {
  /** `namespace/name`, for messages. */
  readonly where: string;
  /** The key's value and the ConfigMap's resourceVersion; undefined when the ConfigMap does not exist. */
  read(): Promise<{ value: string | undefined; resourceVersion: string } | undefined>;
  /** Sets the key (creating the ConfigMap if needed); returns the new resourceVersion. */
  write(value: string): Promise<string>;
}

/** {@link ControlStore} over the Kubernetes API. */
export function kubeControlStore(input: { core: CoreV1Api; namespace: string; name: string }): ControlStore {
  const { core, namespace, name } = input;
  return {
    where: `${namespace}/${name}`,
    async read() {
      try {
        const configMap = await core.readNamespacedConfigMap({ namespace, name });
        return { value: configMap.data?.[DEGRADATION_KEY], resourceVersion: configMap.metadata?.resourceVersion ?? '' };
      } catch (error) {
        if (error instanceof ApiException && error.code === 404) return undefined;
        throw error;
      }
    },
    async write(value) {
      try {
        const patched = await core.patchNamespacedConfigMap(
          { namespace, name, body: { data: { [DEGRADATION_KEY]: value } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        return patched.metadata?.resourceVersion ?? '';
      } catch (error) {
        if (!(error instanceof ApiException && error.code === 404)) throw error;
      }
      const created = await core.createNamespacedConfigMap({
        namespace,
        body: {
          metadata: { name, namespace, labels: { 'app.kubernetes.io/name': 'eniflow' } },
          data: { [DEGRADATION_KEY]: value },
        },
      });
      return created.metadata?.resourceVersion ?? '';
    },
  };
}
