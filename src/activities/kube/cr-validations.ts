import { validateNodeCr } from '../../ipam/index.js';
import type { NodeCrValidation } from '../../ipam/index.js';
import type { RawObject } from './node-snapshot.js';

/**
 * Node CR validations by version: a pass validates its CR when it reads it and again when its status write re-reads
 * it, almost always at the same resourceVersion. The apiserver gives one object one content per resourceVersion, so
 * the validation of (name, uid, resourceVersion) is kept (one per node, the latest) and not computed twice.
 * `validateNodeCr` never aliases its input, and its callers only read the result, so a kept one is safe to share.
 */
export class NodeCrValidations {
  private readonly byName = new Map<string, { uid: string; resourceVersion: string; validation: NodeCrValidation }>();

  private readonly maxNodes: number;

  constructor(maxNodes = 20_000) {
    this.maxNodes = maxNodes;
  }

  validate(raw: RawObject): NodeCrValidation {
    const metadata = raw.metadata ?? {};
    const { name, uid, resourceVersion } = metadata;
    if (
      typeof name !== 'string' ||
      typeof uid !== 'string' ||
      typeof resourceVersion !== 'string' ||
      uid === '' ||
      resourceVersion === ''
    ) {
      return validateNodeCr(raw);
    }
    const kept = this.byName.get(name);
    if (kept?.uid === uid && kept.resourceVersion === resourceVersion) return kept.validation;
    const validation = validateNodeCr(raw);
    // Map order is recency of validation: beyond the bound the node validated longest ago goes.
    this.byName.delete(name);
    this.byName.set(name, { uid, resourceVersion, validation });
    while (this.byName.size > this.maxNodes) this.byName.delete(this.byName.keys().next().value ?? '');
    return validation;
  }
}
