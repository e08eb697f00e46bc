/**
 * The shipped RAM policy (deploy/ram-policy.json) and a small evaluator of it, as RAM evaluates a request: an
 * explicit Deny wins, else some Allow must match, and a statement matches when its action is named and every one of
 * its conditions holds. Only what the policy uses is understood (StringEquals, StringLike on tag keys); anything
 * else throws, so a policy change the evaluator cannot judge fails the tests instead of passing them.
 */
import { readFileSync } from 'node:fs';

export interface RamStatement {
  Effect: 'Allow' | 'Deny';
  Action: string[];
  Resource: string;
  Condition?: Record<string, Record<string, string>>;
}

export interface RamPolicy {
  Version: string;
  Statement: RamStatement[];
}

/** The shipped policy; with `clusterId`, as an operator installs it for that cluster. */
export function shippedRamPolicy(clusterId?: string): RamPolicy {
  const text = readFileSync(new URL('../../deploy/ram-policy.json', import.meta.url), 'utf8');
  return JSON.parse(clusterId === undefined ? text : text.replaceAll('${ENIFLOW_CLUSTER_ID}', clusterId)) as RamPolicy;
}

/** The RAM action of an OpenAPI action: DescribeVSwitches is the VPC service's, the rest are ECS's. */
export function ramAction(operation: string): string {
  return operation === 'DescribeVSwitches' ? `vpc:${operation}` : `ecs:${operation}`;
}

/**
 * One request as RAM sees it: `ecs:tag/<key>` reads the request's tags for a create and the resource's tags
 * otherwise; `acs:RequestTag/<key>` the request's, `acs:ResourceTag/<key>` the resource's. An absent key matches
 * no condition.
 */
export interface RamRequest {
  action: string;
  resourceTags?: Record<string, string>;
  requestTags?: Record<string, string>;
}

function keyValue(request: RamRequest, key: string): string | undefined {
  const prefix = key.slice(0, key.indexOf('/'));
  const tagKey = key.slice(key.indexOf('/') + 1);
  if (prefix === 'ecs:tag') {
    const tags = request.action === 'ecs:CreateNetworkInterface' ? request.requestTags : request.resourceTags;
    return tags?.[tagKey];
  }
  if (prefix === 'acs:RequestTag') return request.requestTags?.[tagKey];
  if (prefix === 'acs:ResourceTag') return request.resourceTags?.[tagKey];
  throw new Error(`condition key ${key} is not one this test knows`);
}

function like(pattern: string, value: string): boolean {
  const regex = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replaceAll('*', '.*')
    .replaceAll('?', '.');
  return new RegExp(`^${regex}$`).test(value);
}

function matches(statement: RamStatement, request: RamRequest): boolean {
  if (!statement.Action.includes(request.action)) return false;
  for (const [operator, conditions] of Object.entries(statement.Condition ?? {})) {
    for (const [key, wanted] of Object.entries(conditions)) {
      const value = keyValue(request, key);
      if (value === undefined) return false;
      if (operator === 'StringEquals' && value !== wanted) return false;
      if (operator === 'StringLike' && !like(wanted, value)) return false;
      if (operator !== 'StringEquals' && operator !== 'StringLike') throw new Error(`operator ${operator}`);
    }
  }
  return true;
}

/** RAM's verdict on one request under `policy`: an explicit Deny wins, else some Allow must match. */
export function ramAllows(policy: RamPolicy, request: RamRequest): boolean {
  const hits = policy.Statement.filter((statement) => matches(statement, request));
  return !hits.some((statement) => statement.Effect === 'Deny') && hits.some((s) => s.Effect === 'Allow');
}
