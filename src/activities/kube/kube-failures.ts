import { ApiException } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';

/** Failure types of the Kubernetes activities. */
export const KUBE_FAILURE_TYPES = [
  'KubeConflict',
  'KubeNotFound',
  'KubeTransient',
  'KubeInvalidRequest',
  'KubeStaleBase',
] as const;
export type KubeFailureType = (typeof KUBE_FAILURE_TYPES)[number];
export const NON_RETRYABLE_KUBE_FAILURES: readonly KubeFailureType[] = ['KubeNotFound', 'KubeInvalidRequest'];

export function statusOf(error: unknown): number | undefined {
  if (error instanceof ApiException) return error.code;
  return undefined;
}

/** Converts a client-node failure into a Temporal failure: 404/409 named, 5xx and transport retryable. */
export function kubeFailure(error: unknown, what: string): ApplicationFailure {
  const code = statusOf(error);
  const message = `${what}: ${code === undefined ? String(error) : `HTTP ${code}`}`;
  if (code === 409) return ApplicationFailure.retryable(message, 'KubeConflict');
  if (code === 404) return ApplicationFailure.nonRetryable(message, 'KubeNotFound');
  if (code === undefined || code >= 500 || code === 429) return ApplicationFailure.retryable(message, 'KubeTransient');
  return ApplicationFailure.nonRetryable(message, 'KubeInvalidRequest');
}
