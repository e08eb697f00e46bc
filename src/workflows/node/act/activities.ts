import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

import type { Activities } from '../../../activities/index.js';
import { ACTIVITY_POLICIES, LOCAL_ACTIVITY_POLICIES, singleAttempt } from '../../activity-policies.js';
import { proxyActivitiesWithSummaries } from '../../activity-summaries.js';

/** The node workflow's activities, one proxy per retry policy; cloud calls carry Web UI summaries. */
export const kubeRead = proxyActivities<Activities>(ACTIVITY_POLICIES.kubeRead);
export const ecsRead = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.ecsRead);
export const create = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.createEni);
export const attach = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.attachEni);
/** One attempt, for calls the node knows are failing (see `singleAttempt`). */
export const attachOnce = proxyActivitiesWithSummaries(singleAttempt(ACTIVITY_POLICIES.attachEni));
export const wait = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.waitEniStatus);
export const release = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.releaseEni);
export const ipOps = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.ipOps);
export const adopt = proxyActivitiesWithSummaries(ACTIVITY_POLICIES.adoptEnis);
/** Cheap reads as local activities: one marker in history instead of a task of their own. */
export const kubeReadLocal = proxyLocalActivities<Activities>(LOCAL_ACTIVITY_POLICIES.kubeRead);
export const ecsReadLocal = proxyLocalActivities<Activities>(LOCAL_ACTIVITY_POLICIES.ecsRead);
/** The node's own Kubernetes writes, local too: a pass served from the warm pool is then one workflow task. */
export const statusWrite = proxyLocalActivities<Activities>(LOCAL_ACTIVITY_POLICIES.statusWrite);
export const kubeNotice = proxyLocalActivities<Activities>(LOCAL_ACTIVITY_POLICIES.kubeNotice);

export type CreatedEni = Awaited<ReturnType<Activities['createEni']>>['eni'];
