/**
 * Test-only workflow bundle entry: the production workflows plus {@link continuedNodeStart}, which starts a node's
 * workflow as a continue-as-new of itself. A fresh `nodeIpamWorkflow` start refuses `carried` state (only its own
 * continue-as-new may hand it on); tests that need a node with history (say, ten failed passes) go through here.
 * It also shows the limit of that refusal (docs/security.md): whoever can run workflow code on the task queue can
 * continue-as-new into any type, so the refusal guards against clients, not against rogue workers.
 */
import { makeContinueAsNewFunc } from '@temporalio/workflow';

import type { nodeIpamWorkflow, NodeIpamWorkflowInput } from '../../src/workflows/node-ipam-workflow.js';
import { NODE_WORKFLOW_TYPE } from '../../src/shared/workflow-ids.js';

export { eniJanitorWorkflow, nodeIpamWorkflow } from '../../src/workflows/index.js';

export async function continuedNodeStart(input: NodeIpamWorkflowInput): Promise<never> {
  return makeContinueAsNewFunc<typeof nodeIpamWorkflow>({ workflowType: NODE_WORKFLOW_TYPE })(input);
}
