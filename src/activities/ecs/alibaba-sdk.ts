/**
 * Loading and configuring the official Alibaba Cloud SDK clients (`@alicloud/ecs20140526`, `@alicloud/vpc20160428`):
 * where to reach them, with which credential, and one attempt per call (Temporal owns retries).
 */
import { createRequire } from 'node:module';

import Credential from '@alicloud/credentials';
import type * as $Ecs from '@alicloud/ecs20140526';
import type * as $OpenApi from '@alicloud/openapi-core';
import type * as $Vpc from '@alicloud/vpc20160428';

import { loadSdkModule } from './lazy-sdk-module.js';

/** How to reach ECS and VPC: the real regional endpoints, or the emulator (`127.0.0.1:PORT`, `http`). */
export interface EcsConnectionConfig {
  regionId: string;
  /** `host[:port]`; omitted → the SDK's regional endpoint. */
  ecsEndpoint?: string;
  vpcEndpoint?: string;
  protocol?: 'http' | 'https';
  /** A static AccessKey pair; omitted → Alibaba Cloud's default credential chain (env, RRSA/OIDC, ECS RAM role…). */
  accessKey?: { accessKeyId: string; accessKeySecret: string };
  readTimeoutMs?: number;
  connectTimeoutMs?: number;
}

/** The SDK modules and clients, loaded on first use (see `AlibabaEcsApi`). */
export interface Sdk {
  $Ecs: typeof $Ecs;
  $Vpc: typeof $Vpc;
  ecs: $Ecs.default;
  vpc: $Vpc.default;
}

type ClientClass<C> = new (config: $OpenApi.$OpenApiUtil.Config) => C;

function sdkConfig(
  openApi: typeof $OpenApi,
  config: EcsConnectionConfig,
  endpoint: string | undefined,
): $OpenApi.$OpenApiUtil.Config {
  const sdk = new openApi.$OpenApiUtil.Config({
    regionId: config.regionId,
    protocol: config.protocol ?? 'https',
    // Terway uses 20 s; httpx would default to 3 s, too short for a busy region.
    readTimeout: config.readTimeoutMs ?? 20_000,
    connectTimeout: config.connectTimeoutMs ?? 5_000,
  });
  if (endpoint !== undefined) sdk.endpoint = endpoint;
  if (config.accessKey !== undefined) {
    sdk.accessKeyId = config.accessKey.accessKeyId;
    sdk.accessKeySecret = config.accessKey.accessKeySecret;
  } else {
    // Without a credential the SDK sends nothing and fails with InvalidCredentials; the chain must be explicit.
    sdk.credential = new Credential.default();
  }
  // No retryOptions: the SDK then makes exactly one attempt and Temporal owns retries.
  return sdk;
}

/**
 * Loads the ECS and VPC clients (their models on first use, see lazy-sdk-module.ts) and builds them for `connection`.
 * Even so the load takes a few hundred ms of CPU, so this runs on first use (or `AlibabaEcsApi.preload`), never at
 * import.
 */
export async function loadSdk(connection: EcsConnectionConfig): Promise<Sdk> {
  const ecsModule = loadSdkModule('@alicloud/ecs20140526') as typeof $Ecs;
  const vpcModule = loadSdkModule('@alicloud/vpc20160428') as typeof $Vpc;
  const openApi = createRequire(import.meta.url)('@alicloud/openapi-core') as typeof $OpenApi;
  // TypeScript types a CommonJS package's `default` as the whole module; at run time it is the client class.
  const Ecs = ecsModule.default as unknown as ClientClass<$Ecs.default>;
  const Vpc = vpcModule.default as unknown as ClientClass<$Vpc.default>;
  return Promise.resolve({
    $Ecs: ecsModule,
    $Vpc: vpcModule,
    ecs: new Ecs(sdkConfig(openApi, connection, connection.ecsEndpoint)),
    vpc: new Vpc(sdkConfig(openApi, connection, connection.vpcEndpoint)),
  });
}
