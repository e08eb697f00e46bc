import type { CloudModel } from '../cloud-model.js';
import type { RequestParams } from '../request-params.js';

/** What an action handler gets: the parsed parameters, the cloud model and the injected attach failure flag. */
export interface ActionContext {
  params: RequestParams;
  model: CloudModel;
  /** AttachNetworkInterface only: an `attach-fail` fault is active for this call. */
  failAttach: boolean;
}

/** A response body without `RequestId`, which the server adds. */
export type ActionBody = Record<string, unknown>;

/** One API action the emulator serves. */
export interface ActionDefinition {
  product: 'Ecs' | 'Vpc';
  /** `2014-05-26` for ECS, `2016-04-28` for VPC. */
  version: string;
  /** Whether `RegionId` is mandatory (all but DescribeInstanceTypes and the VPC reads, which check it themselves). */
  requiresRegion: boolean;
  /** Whether `ClientToken` makes the call idempotent (Create and the two Assign calls). */
  idempotent: boolean;
  handle: (context: ActionContext) => ActionBody;
}

export const ECS_VERSION = '2014-05-26';
export const VPC_VERSION = '2016-04-28';
