import type { ActionDefinition } from './action-types.js';
import { ENI_ACTIONS } from './eni-actions.js';
import { INSTANCE_ACTIONS } from './instance-actions.js';
import { IP_ACTIONS } from './ip-actions.js';
import { VSWITCH_ACTIONS } from './vswitch-actions.js';

/** Every action the emulator serves, by wire name. ECS and VPC names do not collide, so one table serves both. */
export const ACTIONS: ReadonlyMap<string, ActionDefinition> = new Map(
  Object.entries({ ...ENI_ACTIONS, ...IP_ACTIONS, ...INSTANCE_ACTIONS, ...VSWITCH_ACTIONS }),
);
