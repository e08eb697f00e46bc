/**
 * Runtime validation of a Terway `Node` custom resource read from Kubernetes: untyped JSON in, a typed
 * {@link NodeCr} plus a list of problems out. It never throws.
 *
 * Severity policy (the apiserver's structural schema already refuses wrong JSON types and enum values, so most
 * problems found here are semantic: inverted pool bounds, bad IP text, map keys that disagree with their entry):
 *
 * - `unusable` (`ok: false`): not an object, not `network.alibabacloud.com/v1beta1` `Node`, or no `metadata.name`.
 * - `info`: `spec.eni` / `spec.pool` absent. The per-node daemon has not written them yet; `readiness` is
 *   `daemonNotReady` and the controller waits, exactly as Terway does.
 * - `blocking`: the controller must neither allocate nor release for this node, because acting on a partial
 *   reading could hand one IP to two pods or create the wrong ENIs. This covers every defect in what the daemon
 *   asked for (`spec.eni`, `spec.pool`, `spec.flavor`), a missing or unusable `nodeMetadata.instanceID` / `zoneID`
 *   or `nodeCap` limits, garbled `metadata` fields, an unreadable `status` or `networkInterfaces`, Terway's prefix
 *   mode (`spec.eni.enableIPPrefix`, which this controller does not implement), and any defective ENI or IP entry
 *   that holds (or may hold) a pod binding.
 * - `warning`: a defect that can be dropped without losing a pod binding. The defective ENI or IP entry, or the
 *   optional field, is left out of the returned node and the next OpenAPI sync rebuilds it from ECS. This covers
 *   idle IP entries, ENIs without bound IPs, descriptive fields (`macAddress`, CIDRs, conditions, sync times, the
 *   warm-up and idle reclaim status fields), `spec.pool.poolSyncPeriod` and `spec.pool.reclaim.jitterFactor` (Terway's
 *   fallbacks apply: the controller's period, 0.1; told by a Warning Event, see validate-pool-spec.ts),
 *   optional `nodeMetadata` / `nodeCap` fields and an unknown `vSwitchSelectPolicy` (the controller then uses its
 *   default). Two warnings keep or fill the value instead: a malformed `deletionTimestamp` (only its presence
 *   matters) and a missing `apiVersion` / `kind`.
 *
 * `null` counts as absent everywhere: Go marshals nil slices and zero times as `null`. Fields the model does not
 * know (Kubernetes' own metadata, newer Terway fields) are dropped silently, so the returned node must never be
 * written back whole: patch only the fields this controller owns.
 */

import {
  childPath,
  describe,
  isObject,
  own,
  readString,
  readStringArray,
  readStringMap,
  report,
  scopeOf,
} from './node-cr-fields.js';
import type { JsonObject, Scope } from './node-cr-fields.js';
import type { SpecProblem } from './node-cr-problems.js';
import { NODE_CR_API_VERSION, NODE_CR_KIND } from './node-model.js';
import type { NodeCr, NodeSpec, NodeStatus, ObjectMeta, ReadyNodeCr, ReadyNodeSpec } from './node-model.js';
import { parseRfc3339 } from './rfc3339.js';
import { validateSpec } from './validate-node-spec.js';
import { validateStatus } from './validate-node-status.js';

export * from './node-cr-problems.js';

/**
 * `daemonNotReady` while Terway's daemon has not yet written `spec.eni` and `spec.pool`; `ready` once it has (a bad
 * value is then `isBlocked`, not "not ready").
 */
export type NodeReadiness = 'ready' | 'daemonNotReady';

interface UsableNodeCrBase {
  ok: true;
  problems: readonly SpecProblem[];
}

/** A ready node no problem blocks: the only kind the controller allocates and releases for, its spec typed ready. */
export interface ReadyNodeCrValidation extends UsableNodeCrBase {
  node: ReadyNodeCr;
  readiness: 'ready';
  isBlocked: false;
}

/** A node whose daemon has written its spec, with a `blocking` problem: do not allocate or release IPs for it. */
export interface BlockedNodeCrValidation extends UsableNodeCrBase {
  node: NodeCr;
  readiness: 'ready';
  isBlocked: true;
}

/** A node whose daemon has not written `spec.eni` and `spec.pool` yet (`isBlocked` as for any node). */
export interface WaitingNodeCrValidation extends UsableNodeCrBase {
  node: NodeCr;
  readiness: 'daemonNotReady';
  /** True when some problem is `blocking`. */
  isBlocked: boolean;
}

/**
 * A CR that could be read: the typed copy, its readiness and whether a blocking problem forbids allocation. Checking
 * `readiness` and `isBlocked` narrows it to {@link ReadyNodeCrValidation}.
 */
export type UsableNodeCr = ReadyNodeCrValidation | BlockedNodeCrValidation | WaitingNodeCrValidation;

/** A CR that cannot be used at all (not a Terway Node or no name); `problems` says why. */
export interface UnusableNodeCr {
  ok: false;
  problems: readonly SpecProblem[];
}

/** Result of {@link validateNodeCr}. */
export type NodeCrValidation = UsableNodeCr | UnusableNodeCr;

function validateMetadata(scope: Scope, name: string): ObjectMeta {
  const uid = readString(scope, 'uid');
  const resourceVersion = readString(scope, 'resourceVersion');
  const labels = readStringMap(scope, 'labels');
  const annotations = readStringMap(scope, 'annotations');
  const finalizers = readStringArray(scope, 'finalizers');
  // Only the presence of deletionTimestamp matters (the CR is being deleted), so a malformed value is kept.
  const deletionTimestamp = readString(scope, 'deletionTimestamp');
  if (deletionTimestamp !== undefined && parseRfc3339(deletionTimestamp) === undefined) {
    const path = childPath(scope.path, 'deletionTimestamp');
    const message = `${path} is not an RFC 3339 time: ${describe(deletionTimestamp)}`;
    report(scope.sink, { path, code: 'malformedTime', severity: 'warning', message });
  }
  return {
    name,
    ...(uid === undefined ? {} : { uid }),
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
    ...(labels === undefined ? {} : { labels }),
    ...(annotations === undefined ? {} : { annotations }),
    ...(finalizers === undefined ? {} : { finalizers }),
    ...(deletionTimestamp === undefined ? {} : { deletionTimestamp }),
  };
}
function compareProblems(a: SpecProblem, b: SpecProblem): number {
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  if (a.code !== b.code) return a.code < b.code ? -1 : 1;
  return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
}

function unusable(problem: Omit<SpecProblem, 'severity'>): UnusableNodeCr {
  return { ok: false, problems: [{ ...problem, severity: 'blocking' }] };
}

/** Checks the identity fields without which the object is not a Terway Node CR at all. */
function readIdentity(root: Scope): { name: string } | UnusableNodeCr {
  for (const [key, expected] of [
    ['apiVersion', NODE_CR_API_VERSION],
    ['kind', NODE_CR_KIND],
  ] as const) {
    const value = own(root.object, key);
    if (value !== undefined && value !== expected) {
      const message = `${key} is ${describe(value)}, expected ${JSON.stringify(expected)}: not a Terway Node resource`;
      return unusable({ path: key, code: 'unknownValue', message });
    }
  }
  const metadata = own(root.object, 'metadata');
  if (!isObject(metadata)) {
    const code = metadata === undefined ? 'missing' : 'invalidType';
    return unusable({ path: 'metadata', code, message: `metadata must be an object, got ${describe(metadata)}` });
  }
  const name = own(metadata, 'name');
  if (typeof name !== 'string' || name === '') {
    const code = name === undefined || name === '' ? 'missing' : 'invalidType';
    const message = `metadata.name must be a non-empty string, got ${describe(name)}`;
    return unusable({ path: 'metadata.name', code, message });
  }
  return { name };
}

/** Whether the daemon has written `spec.eni` and `spec.pool`, valid or not: a bad value is blocking, not "not ready". */
function hasDaemonWritten(raw: JsonObject): boolean {
  const spec = own(raw, 'spec');
  return isObject(spec) && own(spec, 'eni') !== undefined && own(spec, 'pool') !== undefined;
}

/**
 * Turns a Node CR as read from Kubernetes into a typed copy with only the fields the model knows, plus every
 * problem found, ordered by path; never throws and never aliases the input.
 */
export function validateNodeCr(raw: unknown): NodeCrValidation {
  if (!isObject(raw)) {
    return unusable({
      path: '',
      code: 'invalidType',
      message: `a Node resource must be an object, got ${describe(raw)}`,
    });
  }
  const problems: SpecProblem[] = [];
  const root = scopeOf({ problems, severity: 'blocking' }, '', raw);
  const identity = readIdentity(root);
  if ('ok' in identity) return identity;
  for (const key of ['apiVersion', 'kind']) {
    if (own(raw, key) === undefined) {
      report(root.sink, { path: key, code: 'missing', severity: 'warning', message: `${key} is missing` });
    }
  }
  const metadata = validateMetadata(scopeOf(root.sink, 'metadata', raw['metadata'] as JsonObject), identity.name);
  const spec = validateSpec(root);
  const status = validateStatus(root);
  problems.sort(compareProblems);
  const isBlocked = problems.some((problem) => problem.severity === 'blocking');
  if (!hasDaemonWritten(raw)) {
    return { ok: true, node: nodeCr(metadata, spec, status), readiness: 'daemonNotReady', isBlocked, problems };
  }
  // Written and unblocked means both were read (a defect in either is blocking); the check keeps that in the type.
  if (isBlocked || !isReadySpec(spec)) {
    return { ok: true, node: nodeCr(metadata, spec, status), readiness: 'ready', isBlocked: true, problems };
  }
  return { ok: true, node: nodeCr(metadata, spec, status), readiness: 'ready', isBlocked: false, problems };
}

function isReadySpec(spec: NodeSpec): spec is ReadyNodeSpec {
  return spec.eni !== undefined && spec.pool !== undefined;
}

function nodeCr<S extends NodeSpec>(
  metadata: ObjectMeta,
  spec: S,
  status: NodeStatus | undefined,
): NodeCr & { spec: S } {
  return {
    apiVersion: NODE_CR_API_VERSION,
    kind: NODE_CR_KIND,
    metadata,
    spec,
    ...(status === undefined ? {} : { status }),
  };
}
