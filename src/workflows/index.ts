/** The workflow bundle's entry: workflow functions only (the worker's `workflowsPath` points here). */
export { nodeIpamWorkflow } from './node-ipam-workflow.js';
export { eniJanitorWorkflow } from './janitor-workflow.js';
