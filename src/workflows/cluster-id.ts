import { ApplicationFailure } from '@temporalio/workflow';

/**
 * The settings of a workflow that acts for one cluster, with their cluster id required: it has no default, and
 * without it the workflow could neither tag what it creates nor tell this cluster's ENIs from a neighbour's. A start
 * without it fails at once (non-retryable, so nothing is retried and the failure is plain in the Web UI).
 */
export function requireClusterId<T extends { clusterId?: string | undefined }>(settings: T): T & { clusterId: string } {
  const { clusterId } = settings;
  if (typeof clusterId !== 'string' || clusterId === '') {
    throw ApplicationFailure.nonRetryable(
      'settings.clusterId is required (the watcher passes ENIFLOW_CLUSTER_ID)',
      'MissingClusterId',
    );
  }
  return { ...settings, clusterId };
}
