/**
 * The places every ECS/VPC action eniflow calls must reach (docs/architecture.md, "A new ECS action"), checked from
 * the one list of actions, `ECS_APIS` (src/shared/ecs-budget.ts): the emulator serves it, the shipped RAM policy
 * grants it and grants nothing else, the security page names the grant, and the emulator's page documents it. The
 * adapter's calls are compared with the same list by the RAM-policy test of the deploy suite.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

import { ACTIONS } from '../../../src/ecs-emulator/actions/action-registry.js';
import { ECS_APIS } from '../../../src/shared/ecs-budget.js';

const ROOT = resolve(import.meta.dirname, '../../..');

/** Actions of the VPC product; every other action is ECS's. */
const VPC_ACTIONS = new Set(['DescribeVSwitches']);

const ramName = (action: string): string => `${VPC_ACTIONS.has(action) ? 'vpc' : 'ecs'}:${action}`;

interface RamPolicy {
  Statement: { Effect: 'Allow' | 'Deny'; Action: string[] }[];
}

/** The actions named in backticks in the first cell after the product of each row of the emulator's action table. */
export function documentedActions(emulatorPage: string): Set<string> {
  const actions = new Set<string>();
  for (const line of emulatorPage.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    if (cells[1] !== 'ECS' && cells[1] !== 'VPC') continue;
    for (const match of (cells[2] ?? '').matchAll(/`([A-Za-z0-9]+)`/g)) actions.add(match[1] ?? '');
  }
  return actions;
}

/** What is missing for each action: `{action: [places]}`, only actions that miss something. */
export function missingPlaces(input: {
  actions: readonly string[];
  served: ReadonlySet<string>;
  granted: ReadonlySet<string>;
  securityPage: string;
  documented: ReadonlySet<string>;
}): Record<string, string[]> {
  const missing: Record<string, string[]> = {};
  for (const action of input.actions) {
    const places = [
      input.served.has(action) ? undefined : 'the emulator (src/ecs-emulator/actions/)',
      input.granted.has(ramName(action)) ? undefined : 'the RAM policy (deploy/ram-policy.json)',
      input.securityPage.includes(`\`${ramName(action)}\``) ? undefined : 'the policy table of docs/security.md',
      input.documented.has(action) ? undefined : 'the action table of docs/ecs-emulator.md',
    ].filter((place) => place !== undefined);
    if (places.length > 0) missing[action] = places;
  }
  return missing;
}

describe('every ECS action eniflow calls', () => {
  it('names the places an action misses (the check itself works)', () => {
    assert.deepEqual(
      missingPlaces({
        actions: ['DescribeVSwitches', 'NewAction'],
        served: new Set(['DescribeVSwitches']),
        granted: new Set(['vpc:DescribeVSwitches', 'ecs:NewAction']),
        securityPage: '| `vpc:DescribeVSwitches` | none |',
        documented: documentedActions('| VPC | `DescribeVSwitches` | … |\n| ECS | `NewAction` / `OldAction` | … |'),
      }),
      { NewAction: ['the emulator (src/ecs-emulator/actions/)', 'the policy table of docs/security.md'] },
    );
  });

  it('is served by the emulator, granted by the RAM policy and documented; the policy grants nothing else', async () => {
    const policy = JSON.parse(await readFile(join(ROOT, 'deploy', 'ram-policy.json'), 'utf8')) as RamPolicy;
    const granted = new Set(policy.Statement.filter((s) => s.Effect === 'Allow').flatMap((s) => s.Action));
    const securityPage = await readFile(join(ROOT, 'docs', 'security.md'), 'utf8');
    const documented = documentedActions(await readFile(join(ROOT, 'docs', 'ecs-emulator.md'), 'utf8'));
    assert.ok(ECS_APIS.length >= 10, `${ECS_APIS.length} actions`);
    assert.deepEqual(
      missingPlaces({ actions: ECS_APIS, served: new Set(ACTIONS.keys()), granted, securityPage, documented }),
      {},
    );
    assert.deepEqual([...granted].sort(), ECS_APIS.map(ramName).sort(), 'the RAM policy grants exactly ECS_APIS');
  });
});
