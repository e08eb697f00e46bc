import { Context } from '@temporalio/activity';

import type { CloudEni, VSwitchInfo } from '../../ipam/index.js';
import type { CallTracer } from '../call-tracer.js';
import type { CreateEniRequest, EcsApi, EcsCallResult } from './ecs-api.js';
import { classifyEcsError, EcsCallError } from './ecs-errors.js';
import type { EcsFailureType } from './ecs-errors.js';
import type { EcsOperation } from './ecs-operations.js';
import type { EcsRateLimiter } from './rate-limiter.js';
import { loadSdk } from './alibaba-sdk.js';
import type { EcsConnectionConfig, Sdk } from './alibaba-sdk.js';
import { cloudEniFrom, sortedPrefixes, tagsOf } from './sdk-eni.js';

/**
 * Called after every cloud call, for metrics: its duration, the cloud's answer (`OK` or the error code, with the
 * failure's type), and how long it first waited for the worker's own rate limit (`rateLimitWaitMs`).
 */
export type EcsCallObserver = (call: {
  operation: EcsOperation;
  durationMs: number;
  code: string;
  failureType?: EcsFailureType;
  rateLimitWaitMs: number;
}) => void;

/** The running activity's cancellation signal, or undefined outside an activity (tests, scripts). */
function activityCancellation(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
}

/** The API an operation belongs to: vSwitches are VPC's, everything else ECS's. */
function serviceOf(operation: EcsOperation): string {
  return operation === 'DescribeVSwitches' ? 'Vpc' : 'Ecs';
}

/** {@link EcsApi} over the official `@alicloud/ecs20140526` and `@alicloud/vpc20160428` clients. */
export class AlibabaEcsApi implements EcsApi {
  private readonly connection: EcsConnectionConfig;
  private readonly regionId: string;
  private readonly limiter: EcsRateLimiter | undefined;
  private readonly observe: EcsCallObserver | undefined;
  private readonly tracer: CallTracer | undefined;
  private sdkLoaded: Promise<Sdk> | undefined;

  constructor(options: {
    connection: EcsConnectionConfig;
    limiter?: EcsRateLimiter;
    observe?: EcsCallObserver;
    /** One span per call (action, result code, RequestId) when tracing is on. */
    tracer?: CallTracer;
  }) {
    this.connection = options.connection;
    this.regionId = options.connection.regionId;
    this.limiter = options.limiter;
    this.observe = options.observe;
    this.tracer = options.tracer;
  }

  /**
   * Loads the ECS and VPC SDKs now, in the background (see `sdk`): the worker calls it once it polls, so the load
   * overlaps the first seconds of a (re)started worker, when tasks still wait on the dead worker's sticky queue,
   * instead of holding the first workflow task that needs a cloud call (its local vSwitch read) for 1–2 s. A
   * failure to load surfaces at the first call.
   */
  preload(): Promise<void> {
    return this.sdk().then(
      () => undefined,
      () => undefined,
    );
  }

  /**
   * The ECS and VPC SDKs take 1–2 s of CPU to load; loading them after the worker polls instead of at import lets a
   * (re)started worker poll for workflow tasks that much sooner.
   */
  private sdk(): Promise<Sdk> {
    this.sdkLoaded ??= loadSdk(this.connection);
    return this.sdkLoaded;
  }

  /** Runs one SDK call under the operation's rate limit, turning any failure into an `EcsCallError`. */
  private async call<T>(operation: EcsOperation, send: (sdk: Sdk) => Promise<T>): Promise<T> {
    const sdk = await this.sdk();
    const waitStarted = performance.now();
    // The bucket's wait ends with the activity's cancellation (only the local vSwitch read waits here now).
    await this.limiter?.take(operation, activityCancellation());
    const rateLimitWaitMs = performance.now() - waitStarted;
    if (this.tracer === undefined) return this.observed({ operation, rateLimitWaitMs }, () => send(sdk));
    return this.tracer(
      {
        name: `ECS ${operation}`,
        attributes: { 'rpc.system': 'alibaba_cloud', 'rpc.service': serviceOf(operation), 'ecs.action': operation },
      },
      (annotate) => this.observed({ operation, rateLimitWaitMs }, () => send(sdk), annotate),
    );
  }

  private async observed<T>(
    { operation, rateLimitWaitMs }: { operation: EcsOperation; rateLimitWaitMs: number },
    send: () => Promise<T>,
    annotate?: (attributes: Record<string, string>) => void,
  ): Promise<T> {
    const started = performance.now();
    try {
      const result = await send();
      this.observe?.({ operation, durationMs: performance.now() - started, code: 'OK', rateLimitWaitMs });
      const requestId = (result as { body?: { requestId?: unknown } } | undefined)?.body?.requestId;
      annotate?.({ 'ecs.code': 'OK', ...(typeof requestId === 'string' ? { 'ecs.request_id': requestId } : {}) });
      return result;
    } catch (error) {
      const failure = classifyEcsError({ operation, error });
      this.observe?.({
        operation,
        durationMs: performance.now() - started,
        code: failure.code,
        failureType: failure.type,
        rateLimitWaitMs,
      });
      annotate?.({
        'ecs.code': failure.code,
        'ecs.failure_type': failure.type,
        ...(failure.requestId === undefined ? {} : { 'ecs.request_id': failure.requestId }),
      });
      throw new EcsCallError(failure, { cause: error });
    }
  }

  async createEni(request: CreateEniRequest): Promise<EcsCallResult & { eni: CloudEni }> {
    const { $Ecs } = await this.sdk();
    const sdkRequest = new $Ecs.CreateNetworkInterfaceRequest({
      regionId: this.regionId,
      vSwitchId: request.vSwitchId,
      securityGroupIds: [...request.securityGroupIds],
      instanceType: request.eniType,
      networkInterfaceTrafficMode: request.trafficMode,
      description: request.description,
      clientToken: request.clientToken,
      tag: tagsOf(request.tags).map((tag) => new $Ecs.CreateNetworkInterfaceRequestTag(tag)),
    });
    if (request.resourceGroupId !== undefined) sdkRequest.resourceGroupId = request.resourceGroupId;
    if (request.ipv4Count > 1) sdkRequest.secondaryPrivateIpAddressCount = request.ipv4Count - 1;
    if (request.ipv6Count > 0) sdkRequest.ipv6AddressCount = request.ipv6Count;
    const { ipv4PrefixCount = 0, ipv6PrefixCount = 0 } = request;
    if (ipv4PrefixCount > 0) sdkRequest.ipv4PrefixCount = ipv4PrefixCount;
    if (ipv6PrefixCount > 0) sdkRequest.ipv6PrefixCount = ipv6PrefixCount;
    const response = await this.call('CreateNetworkInterface', ({ ecs }) => ecs.createNetworkInterface(sdkRequest));
    const body = response.body;
    const eni = cloudEniFrom(body ?? {});
    // The create response carries no traffic mode (and the type only sometimes): the request decided both.
    eni.trafficMode = request.trafficMode;
    if (eni.type === '') eni.type = request.eniType;
    return { requestId: body?.requestId ?? '', eni };
  }

  async attachEni(request: { eniId: string; instanceId: string }): Promise<EcsCallResult> {
    const response = await this.call('AttachNetworkInterface', ({ ecs, $Ecs }) =>
      ecs.attachNetworkInterface(
        new $Ecs.AttachNetworkInterfaceRequest({
          regionId: this.regionId,
          networkInterfaceId: request.eniId,
          instanceId: request.instanceId,
        }),
      ),
    );
    return { requestId: response.body?.requestId ?? '' };
  }

  async detachEni(request: { eniId: string; instanceId: string }): Promise<EcsCallResult> {
    const response = await this.call('DetachNetworkInterface', ({ ecs, $Ecs }) =>
      ecs.detachNetworkInterface(
        new $Ecs.DetachNetworkInterfaceRequest({
          regionId: this.regionId,
          networkInterfaceId: request.eniId,
          instanceId: request.instanceId,
        }),
      ),
    );
    return { requestId: response.body?.requestId ?? '' };
  }

  async deleteEni(request: { eniId: string }): Promise<EcsCallResult> {
    const response = await this.call('DeleteNetworkInterface', ({ ecs, $Ecs }) =>
      ecs.deleteNetworkInterface(
        new $Ecs.DeleteNetworkInterfaceRequest({ regionId: this.regionId, networkInterfaceId: request.eniId }),
      ),
    );
    return { requestId: response.body?.requestId ?? '' };
  }

  async describeEnis(request: {
    instanceId?: string;
    eniIds?: readonly string[];
    tags?: Readonly<Record<string, string>>;
    vpcId?: string;
  }): Promise<CloudEni[]> {
    const { $Ecs } = await this.sdk();
    const enis: CloudEni[] = [];
    let nextToken: string | undefined;
    do {
      const sdkRequest = new $Ecs.DescribeNetworkInterfacesRequest({ regionId: this.regionId, maxResults: 500 });
      if (request.instanceId !== undefined) sdkRequest.instanceId = request.instanceId;
      if (request.eniIds !== undefined) sdkRequest.networkInterfaceId = [...request.eniIds];
      if (request.vpcId !== undefined) sdkRequest.vpcId = request.vpcId;
      if (request.tags !== undefined && Object.keys(request.tags).length > 0) {
        sdkRequest.tag = tagsOf(request.tags).map((tag) => new $Ecs.DescribeNetworkInterfacesRequestTag(tag));
      }
      if (nextToken !== undefined) sdkRequest.nextToken = nextToken;
      const response = await this.call('DescribeNetworkInterfaces', ({ ecs }) =>
        ecs.describeNetworkInterfaces(sdkRequest),
      );
      for (const set of response.body?.networkInterfaceSets?.networkInterfaceSet ?? []) enis.push(cloudEniFrom(set));
      nextToken = response.body?.nextToken === '' ? undefined : response.body?.nextToken;
    } while (nextToken !== undefined);
    return enis;
  }

  async assignIpv4(request: { eniId: string; count: number; clientToken: string }) {
    const response = await this.call('AssignPrivateIpAddresses', ({ ecs, $Ecs }) =>
      ecs.assignPrivateIpAddresses(
        new $Ecs.AssignPrivateIpAddressesRequest({
          regionId: this.regionId,
          networkInterfaceId: request.eniId,
          secondaryPrivateIpAddressCount: request.count,
          clientToken: request.clientToken,
        }),
      ),
    );
    const ips = response.body?.assignedPrivateIpAddressesSet?.privateIpSet?.privateIpAddress ?? [];
    return { requestId: response.body?.requestId ?? '', ips: [...ips] };
  }

  async assignIpv6(request: { eniId: string; count: number; clientToken: string }) {
    const response = await this.call('AssignIpv6Addresses', ({ ecs, $Ecs }) =>
      ecs.assignIpv6Addresses(
        new $Ecs.AssignIpv6AddressesRequest({
          regionId: this.regionId,
          networkInterfaceId: request.eniId,
          ipv6AddressCount: request.count,
          clientToken: request.clientToken,
        }),
      ),
    );
    return { requestId: response.body?.requestId ?? '', ips: [...(response.body?.ipv6Sets?.ipv6Address ?? [])] };
  }

  async unassignIpv4(request: { eniId: string; ips: readonly string[] }): Promise<EcsCallResult> {
    const response = await this.call('UnassignPrivateIpAddresses', ({ ecs, $Ecs }) =>
      ecs.unassignPrivateIpAddresses(
        new $Ecs.UnassignPrivateIpAddressesRequest({
          regionId: this.regionId,
          networkInterfaceId: request.eniId,
          privateIpAddress: [...request.ips],
        }),
      ),
    );
    return { requestId: response.body?.requestId ?? '' };
  }

  async unassignIpv6(request: { eniId: string; ips: readonly string[] }): Promise<EcsCallResult> {
    const response = await this.call('UnassignIpv6Addresses', ({ ecs, $Ecs }) =>
      ecs.unassignIpv6Addresses(
        new $Ecs.UnassignIpv6AddressesRequest({
          regionId: this.regionId,
          networkInterfaceId: request.eniId,
          ipv6Address: [...request.ips],
        }),
      ),
    );
    return { requestId: response.body?.requestId ?? '' };
  }

  async assignIpv4Prefixes(request: { eniId: string; count: number; clientToken: string }) {
    const response = await this.call('AssignPrivateIpAddresses', ({ ecs, $Ecs }) =>
      ecs.assignPrivateIpAddresses(
        new $Ecs.AssignPrivateIpAddressesRequest({
          regionId: this.regionId,
          networkInterfaceId: request.eniId,
          ipv4PrefixCount: request.count,
          clientToken: request.clientToken,
        }),
      ),
    );
    const prefixes = response.body?.assignedPrivateIpAddressesSet?.ipv4PrefixSet?.ipv4Prefixes ?? [];
    return { requestId: response.body?.requestId ?? '', prefixes: sortedPrefixes(prefixes) };
  }

  async assignIpv6Prefixes(request: { eniId: string; count: number; clientToken: string }) {
    const response = await this.call('AssignIpv6Addresses', ({ ecs, $Ecs }) =>
      ecs.assignIpv6Addresses(
        new $Ecs.AssignIpv6AddressesRequest({
          regionId: this.regionId,
          networkInterfaceId: request.eniId,
          ipv6PrefixCount: request.count,
          clientToken: request.clientToken,
        }),
      ),
    );
    const prefixes = response.body?.ipv6PrefixSets?.ipv6Prefix ?? [];
    return { requestId: response.body?.requestId ?? '', prefixes: sortedPrefixes(prefixes) };
  }

  async unassignIpv4Prefixes(request: { eniId: string; prefixes: readonly string[] }): Promise<EcsCallResult> {
    const response = await this.call('UnassignPrivateIpAddresses', ({ ecs, $Ecs }) =>
      ecs.unassignPrivateIpAddresses(
        new $Ecs.UnassignPrivateIpAddressesRequest({
          regionId: this.regionId,
          networkInterfaceId: request.eniId,
          ipv4Prefix: [...request.prefixes],
        }),
      ),
    );
    return { requestId: response.body?.requestId ?? '' };
  }

  async unassignIpv6Prefixes(request: { eniId: string; prefixes: readonly string[] }): Promise<EcsCallResult> {
    const response = await this.call('UnassignIpv6Addresses', ({ ecs, $Ecs }) =>
      ecs.unassignIpv6Addresses(
        new $Ecs.UnassignIpv6AddressesRequest({
          regionId: this.regionId,
          networkInterfaceId: request.eniId,
          ipv6Prefix: [...request.prefixes],
        }),
      ),
    );
    return { requestId: response.body?.requestId ?? '' };
  }

  async tagEnis(request: {
    eniIds: readonly string[];
    tags: Readonly<Record<string, string>>;
  }): Promise<EcsCallResult> {
    const response = await this.call('TagResources', ({ ecs, $Ecs }) =>
      ecs.tagResources(
        new $Ecs.TagResourcesRequest({
          regionId: this.regionId,
          resourceType: 'eni',
          resourceId: [...request.eniIds],
          tag: tagsOf(request.tags).map((tag) => new $Ecs.TagResourcesRequestTag(tag)),
        }),
      ),
    );
    return { requestId: response.body?.requestId ?? '' };
  }

  async describeVSwitch(request: { vSwitchId: string }): Promise<VSwitchInfo | undefined> {
    const response = await this.call('DescribeVSwitches', ({ vpc, $Vpc }) =>
      vpc.describeVSwitches(
        new $Vpc.DescribeVSwitchesRequest({ regionId: this.regionId, vSwitchId: request.vSwitchId }),
      ),
    );
    const found = response.body?.vSwitches?.vSwitch?.find((vsw) => vsw.vSwitchId === request.vSwitchId);
    if (found === undefined) return undefined;
    const info: VSwitchInfo = {
      vSwitchId: request.vSwitchId,
      zoneId: found.zoneId ?? '',
      availableIpCount: found.availableIpAddressCount ?? 0,
    };
    if (found.cidrBlock !== undefined && found.cidrBlock !== '') info.ipv4Cidr = found.cidrBlock;
    if (found.ipv6CidrBlock !== undefined && found.ipv6CidrBlock !== '') info.ipv6Cidr = found.ipv6CidrBlock;
    return info;
  }
}
