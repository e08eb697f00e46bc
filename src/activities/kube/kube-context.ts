import { cancellationSignal } from '@temporalio/activity';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { ConfigurationOptions, KubeConfig } from '@kubernetes/client-node';

import type { NodeCrValidation } from '../../ipam/index.js';

import { NODE_CR_GROUP, NODE_CR_PLURAL, NODE_CR_VERSION } from '../../ipam/index.js';
import { kubeJsonRequest } from '../../kube/kube-json.js';
import type { KubeJsonRequest } from '../../kube/kube-json.js';
import { deadlineOptions, KUBE_REQUEST_TIMEOUT_MS } from '../../kube-request.js';
import type { Logger } from '../../logger.js';
import { activityLogger } from '../activity-log.js';
import type { CallTracer } from '../call-tracer.js';
import { NodeCrValidations } from './cr-validations.js';
import type { NodeReadCache } from '../node-read-cache.js';
import { kubeFailure, statusOf } from './kube-failures.js';
import { tracedApi } from './kube-tracing.js';
import type { RawObject } from './node-snapshot.js';

/** Told of each pod a status write made ready (bound in every family), once per pod and binding. */
export type PodIpReadyObserver = (pod: { nodeName: string; podId: string; seconds: number }) => void;

export interface KubeActivityDeps {
  kubeConfig: KubeConfig;
  logger: Logger;
  /** Name of the component in Events (`source.component`, `reportingController`). */
  component?: string;
  /**
   * Called before each status replace with the attempt number: the seam through which tests let a concurrent
   * writer (Terway's daemon, an operator) change the CR between our read and our write.
   */
  beforeStatusReplace?: (attempt: number) => Promise<void>;
  /** Deadline of each request (default {@link KUBE_REQUEST_TIMEOUT_MS}); a cancelled activity aborts it sooner. */
  requestTimeoutMs?: number;
  /** One span per Kubernetes request when tracing is on. */
  tracer?: CallTracer;
  /** Base URL of the Temporal Web UI (`TEMPORAL_UI_URL`): events then link to the workflow that wrote them. */
  temporalUiUrl?: string;
  /** The worker's informers; `readNodeView` answers from them once synced (else, and when behind, reads live). */
  readCache?: NodeReadCache;
  /** Observes pod creation → IP in the CR (`eniflow_pod_ip_ready_seconds`); the creation time comes from `readCache`. */
  podIpReady?: PodIpReadyObserver;
  /** How long a read waits for the cache to catch up with what the workflow saw before reading live (2 s). */
  cacheWaitMs?: number;
}

/** What every group of Kubernetes activities shares: the traced clients, request options, logging, the CR's name. */
export interface KubeContext {
  readonly deps: KubeActivityDeps;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  /** Every request ends at its deadline, or earlier when the activity is cancelled (or the worker shuts down). */
  readonly call: (options?: ConfigurationOptions) => ConfigurationOptions;
  readonly logFor: (nodeName: string) => Logger;
  readonly crRef: (name: string) => { group: string; version: string; plural: string; name: string };
  /** The Node CR as stored, or undefined when it does not exist. */
  readonly getCr: (name: string) => Promise<RawObject | undefined>;
  /**
   * Replaces the Node CR's status subresource with `body` (the whole object; its resourceVersion is the precondition)
   * and answers the object as written. Errors are client-node's `ApiException`s (see {@link statusOf}).
   */
  readonly replaceCrStatus: (name: string, body: RawObject) => Promise<RawObject>;
  /** Validates a Node CR, once per resourceVersion (a pass's read and its write's re-read share it). */
  readonly validateCr: (raw: RawObject) => NodeCrValidation;
}

/** The Node CR's API path (names escaped as client-node escapes them). */
function crPath(name: string, subresource = ''): string {
  return `/apis/${NODE_CR_GROUP}/${NODE_CR_VERSION}/${NODE_CR_PLURAL}/${encodeURIComponent(name)}${subresource}`;
}

export function createKubeContext(deps: KubeActivityDeps): KubeContext {
  const core = tracedApi(deps.kubeConfig.makeApiClient(CoreV1Api), deps.tracer);
  const custom = tracedApi(deps.kubeConfig.makeApiClient(CustomObjectsApi), deps.tracer);
  const timeoutMs = deps.requestTimeoutMs ?? KUBE_REQUEST_TIMEOUT_MS;
  const call = (options?: ConfigurationOptions): ConfigurationOptions =>
    deadlineOptions({ timeoutMs, signal: cancellationSignal() }, options);
  const crRef = (name: string) => ({ group: NODE_CR_GROUP, version: NODE_CR_VERSION, plural: NODE_CR_PLURAL, name });
  // The Node CR's read and status write run in every pass: a lean request (kube-json.ts), traced under the names
  // client-node's methods would have.
  const crRequest = async (method: string, name: string, request: Omit<KubeJsonRequest, 'signal'>) => {
    const run = async () =>
      kubeJsonRequest(deps.kubeConfig, {
        ...request,
        signal: AbortSignal.any([cancellationSignal(), AbortSignal.timeout(timeoutMs)]),
      }) as Promise<RawObject>;
    const tracer = deps.tracer;
    if (tracer === undefined) return run();
    const attributes = { 'k8s.method': method, 'k8s.resource': NODE_CR_PLURAL, 'k8s.object.name': name };
    return tracer({ name: `Kubernetes ${method}`, attributes }, async (annotate) => {
      try {
        return await run();
      } catch (error) {
        const code = statusOf(error);
        if (code !== undefined) annotate({ 'http.response.status_code': code });
        throw error;
      }
    });
  };
  const validations = new NodeCrValidations();
  return {
    deps,
    core,
    custom,
    call,
    logFor: (nodeName) => activityLogger(deps.logger, { nodeName }),
    crRef,
    getCr: async (name) => {
      try {
        return await crRequest('getClusterCustomObject', name, { method: 'GET', path: crPath(name) });
      } catch (error) {
        if (statusOf(error) === 404) return undefined;
        throw kubeFailure(error, `get Node CR ${name}`);
      }
    },
    validateCr: (raw) => validations.validate(raw),
    replaceCrStatus: async (name, body) =>
      crRequest('replaceClusterCustomObjectStatus', name, { method: 'PUT', path: crPath(name, '/status'), body }),
  };
}
