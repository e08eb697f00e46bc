/**
 * The error codes the emulator produces, with the HTTP status and message the real ECS/VPC APIs use
 * (docs/ecs-emulator.md, "Error codes").
 */
export const ERROR_CATALOG = {
  MissingParameter: {
    status: 400,
    message: 'The input parameter that is mandatory for processing this request is not supplied.',
  },
  InvalidParameter: { status: 400, message: 'The specified parameter is not valid.' },
  'InvalidParameter.Conflict': { status: 400, message: 'The specified parameters conflict with each other.' },
  'InvalidAction.NotFound': { status: 404, message: 'Specified api is not found, please check your url and method.' },
  InvalidVersion: { status: 400, message: 'Specified parameter Version is not valid.' },
  IncompleteSignature: { status: 400, message: 'The request signature does not conform to Aliyun standards.' },
  SignatureDoesNotMatch: { status: 400, message: 'Specified signature is not matched with our calculation.' },
  'InvalidAccessKeyId.NotFound': { status: 400, message: 'Specified access key is not found.' },
  SignatureNonceUsed: { status: 400, message: 'Specified signature nonce was used already.' },
  IllegalTimestamp: { status: 400, message: 'Specified time stamp or date value is expired.' },
  'InvalidRegionId.NotFound': { status: 404, message: 'The specified RegionId does not exist.' },
  'Throttling.User': { status: 400, message: 'Request was denied due to user flow control.' },
  Throttling: { status: 400, message: 'Request was denied due to request throttling.' },
  ServiceUnavailable: { status: 503, message: 'The request has failed due to a temporary failure of the server.' },
  InternalError: { status: 500, message: 'The request processing has failed due to some unknown error.' },
  'Operation.Conflict': { status: 403, message: 'The operation may conflict with other operations.' },
  'InvalidEniId.NotFound': { status: 404, message: 'The specified NetworkInterfaceId does not exist.' },
  'InvalidResourceId.NotFound': { status: 404, message: 'The specified ResourceIds are not found in our records.' },
  'InvalidResourceType.NotFound': { status: 404, message: 'The ResourceType provided does not exist in our records.' },
  'InvalidEcsId.NotFound': { status: 404, message: 'The specified InstanceId does not exist.' },
  'InvalidVSwitchId.NotFound': { status: 404, message: 'The specified VSwitchId does not exist.' },
  'InvalidSecurityGroupId.NotFound': { status: 404, message: 'The specified SecurityGroupId does not exist.' },
  'InvalidOperation.InvalidEniState': {
    status: 400,
    message: 'The operation is not allowed in the current ENI state.',
  },
  'InvalidOperation.InvalidEcsState': {
    status: 400,
    message: 'The operation is not allowed in the current instance state.',
  },
  'InvalidOperation.DetachPrimaryEniNotAllowed': { status: 400, message: 'Detaching the primary ENI is not allowed.' },
  'InvalidOperation.InvalidEniType': { status: 403, message: 'The ENI type is not supported by the operation.' },
  EniPerInstanceLimitExceeded: { status: 403, message: 'The maximum number of ENIs on the instance is exceeded.' },
  'InvalidVSwitchId.IpNotEnough': { status: 403, message: 'The specified VSwitch has not enough IpAddress.' },
  'QuotaExceeded.PrivateIpAddress': { status: 400, message: 'The private IP addresses in the VSwitch are not enough.' },
  'InvalidOperation.Ipv4CountExceeded': {
    status: 403,
    message: 'The maximum number of IPv4 addresses on the ENI is exceeded.',
  },
  'InvalidOperation.Ipv6CountExceeded': {
    status: 403,
    message: 'The maximum number of IPv6 addresses on the ENI is exceeded.',
  },
  'InvalidVSwitch.Ipv6NotTurnOn': { status: 403, message: 'The IPv6 of the specified VSwitch is not turned on.' },
  'InvalidVSwitchId.IpInvalid': {
    status: 403,
    message: 'The specified IP address is not within the VSwitch CIDR block.',
  },
  'InvalidPrivateIpAddress.Duplicated': { status: 400, message: 'The specified private IP address is already in use.' },
  'InvalidIp.IpUnassigned': { status: 400, message: 'The specified IP address is not assigned to the ENI.' },
  'InvalidOperation.AvailabilityZoneMismatch': {
    status: 403,
    message: 'The ENI and the instance are in different zones.',
  },
  'InvalidOperation.VpcMismatch': { status: 403, message: 'The resources belong to different VPCs.' },
  IdempotentParameterMismatch: {
    status: 400,
    message: 'The request uses the same client token as a previous, but non-identical request.',
  },
  // ECS names the code without documenting its status; a 4xx, since a retry with the token cannot succeed.
  IdempotentFailed: {
    status: 400,
    message: 'The previous request with the same client token failed; use a new client token.',
  },
} as const satisfies Record<string, { status: number; message: string }>;

/** A code listed in {@link ERROR_CATALOG}. */
export type KnownErrorCode = keyof typeof ERROR_CATALOG;

/** An API failure the emulator answers as `{RequestId, HostId, Code, Message, Recommend}` with the given HTTP status. */
export class EmulatorApiError extends Error {
  readonly code: string;
  readonly httpStatus: number;

  constructor(init: { code: string; httpStatus: number; message: string }) {
    super(init.message);
    this.name = 'EmulatorApiError';
    this.code = init.code;
    this.httpStatus = init.httpStatus;
  }
}

/** Builds the catalogued error for `code`; `detail` replaces the generic message when the cause is specific. */
export function apiError(code: KnownErrorCode, detail?: string): EmulatorApiError {
  const entry = ERROR_CATALOG[code];
  return new EmulatorApiError({ code, httpStatus: entry.status, message: detail ?? entry.message });
}

/** Status for an injected code: the catalogued one, else 5xx-looking codes get 503 and the rest 400. */
export function defaultStatusForCode(code: string): number {
  if (code in ERROR_CATALOG) return ERROR_CATALOG[code as KnownErrorCode].status;
  return /Unavailable|Internal|Timeout/i.test(code) ? 503 : 400;
}

/** Message for an injected code: the catalogued one, else a generic line naming the code. */
export function defaultMessageForCode(code: string): string {
  if (code in ERROR_CATALOG) return ERROR_CATALOG[code as KnownErrorCode].message;
  return `Injected fault ${code}.`;
}
