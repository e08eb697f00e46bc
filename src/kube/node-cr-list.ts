import type { CustomObjectsApi, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';

import { NODE_CR_GROUP, NODE_CR_PLURAL, NODE_CR_VERSION } from '../ipam/node-model.js';
import { abortOptions } from '../kube-request.js';

/** The watch path of Terway's Node CRs, for a `ResourceInformer`'s `path`. */
export const NODE_CR_PATH = `/apis/${NODE_CR_GROUP}/${NODE_CR_VERSION}/${NODE_CR_PLURAL}`;

/**
 * A Node-CR informer's `list`: every Node CR, abandoned when the informer's signal fires. The watcher and the
 * worker's read cache each view the items their own way, so the item type is theirs to name.
 */
export function nodeCrList<T extends KubernetesObject>(
  customObjects: CustomObjectsApi,
): (signal: AbortSignal) => Promise<KubernetesListObject<T>> {
  return async (signal) =>
    (await customObjects.listClusterCustomObject(
      { group: NODE_CR_GROUP, version: NODE_CR_VERSION, plural: NODE_CR_PLURAL },
      abortOptions(signal),
    )) as KubernetesListObject<T>;
}
