/**
 * The pure IPAM core: every decision of a node's reconcile as deterministic functions over plain JSON.
 * No I/O, no clock, no randomness: time and random draws are inputs. Other layers import from here only.
 */
export * from './node-model.js';
export * from './ip-address.js';
export * from './rfc3339.js';
export * from './eni-records.js';
export * from './pod-demand.js';
export * from './local-pool.js';
export * from './cloud-eni.js';
export * from './openapi-merge.js';
export * from './vswitch-choice.js';
export * from './eni-plan.js';
export * from './eni-calls.js';
export * from './create-headroom.js';
export * from './release-plan.js';
export * from './gc-plan.js';
export * from './conditions.js';
export * from './fold-outcomes.js';
export * from './validate-node.js';
export * from './pending-reasons.js';
export * from './eni-ownership.js';
export * from './node-runtime.js';
export * from './status-merge.js';
export * from './orphan-enis.js';
export * from './backoff.js';
export * from './operation-failures.js';
export * from './json-delta.js';
export * from './failure-ledger.js';
export * from './next-pass.js';
export * from './notice-bookkeeping.js';
export * from './pending-notices.js';
export * from './event-reasons.js';
export * from './create-intents.js';
export * from './sync-schedule.js';
export * from './resource-version.js';
export * from './stuck-wait.js';
export * from './prefix-records.js';
export * from './prefix-plan.js';
export * from './latency-observations.js';
export * from './degradation.js';
export * from './go-duration.js';
export * from './warm-up.js';
export * from './idle-reclaim.js';
export * from './pool-status.js';
export * from './pass-pacing.js';
