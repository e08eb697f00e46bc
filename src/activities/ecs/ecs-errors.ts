import type { EcsOperation } from './ecs-operations.js';

/**
 * What an ECS failure means for the controller. This is the closed list of Temporal `ApplicationFailure` types
 * the activities throw; retry policies name the non-retryable ones.
 */
export const ECS_FAILURE_TYPES = [
  /** `Throttling*`: retry later, honouring the server's retry-after hint. */
  'EcsThrottled',
  /** 5xx, `InternalError`, `ServiceUnavailable`, `Operation.Conflict`, transport errors and timeouts: retry. */
  'EcsTransient',
  /**
   * `InvalidVSwitchId.IpNotEnough`, `QuotaExceeded.PrivateIpAddress`: block the vSwitch, do not retry. Prefix calls
   * meet the same codes when no free /28 (or /80) is left, which can happen while single addresses remain.
   */
  'EcsVSwitchExhausted',
  /**
   * `EniPerInstanceLimitExceeded`, `InvalidOperation.Ipv4CountExceeded/Ipv6CountExceeded`: resync, do not retry.
   * IPv4 prefixes share the ENI's `EniPrivateIpAddressQuantity` slots with its addresses, so a prefix assign past
   * them answers `Ipv4CountExceeded` too (ECS documents no prefix-specific code).
   */
  'EcsQuotaExceeded',
  /** `InvalidEniId.NotFound`, `InvalidVSwitchId.NotFound`, …: the resource is gone. */
  'EcsNotFound',
  /**
   * `InvalidInstanceId.NotFound`, `InvalidEcsId.NotFound`: the node's instance does not exist. Not the ENI's fault: an
   * ENI whose attach meets it is kept, and the node waits for a spec change instead of retrying.
   */
  'EcsInstanceNotFound',
  /** `InvalidOperation.InvalidEniState`: the ENI is mid-transition or in the wrong state; worth a later retry. */
  'EcsInvalidState',
  /** Bad parameters, signature or permission problems, idempotency mismatches: retrying cannot help. */
  'EcsInvalidRequest',
  /** Anything unrecognised; treated as retryable so a new code does not wedge a node. */
  'EcsUnknown',
] as const;

export type EcsFailureType = (typeof ECS_FAILURE_TYPES)[number];

/** Failure types a retry cannot fix; every ECS activity's retry policy lists these as non-retryable. */
export const NON_RETRYABLE_ECS_FAILURES: readonly EcsFailureType[] = [
  'EcsVSwitchExhausted',
  'EcsQuotaExceeded',
  'EcsNotFound',
  'EcsInstanceNotFound',
  'EcsInvalidRequest',
];

/** A classified ECS failure with what the cloud said, for logs, conditions, events and Temporal failures. */
export interface EcsFailure {
  type: EcsFailureType;
  operation: EcsOperation;
  /** The cloud's error code (`InvalidVSwitchId.IpNotEnough`), or the transport error code (`ECONNRESET`). */
  code: string;
  requestId?: string;
  message: string;
  retryable: boolean;
  /** Server hint for throttling (`x-acs-retry-after`), in ms. */
  retryAfterMs?: number;
}

const CODE_TYPES: readonly { match: (code: string) => boolean; type: EcsFailureType }[] = [
  { match: (code) => code.includes('Throttling'), type: 'EcsThrottled' },
  {
    match: (code) => code === 'InvalidVSwitchId.IpNotEnough' || code === 'QuotaExceeded.PrivateIpAddress',
    type: 'EcsVSwitchExhausted',
  },
  {
    match: (code) =>
      [
        'EniPerInstanceLimitExceeded',
        'InvalidOperation.Ipv4CountExceeded',
        'InvalidOperation.Ipv6CountExceeded',
        'MaxEniPrivateIpsCountExceeded',
        'MaxEniIpv6IpsCountExceeded',
        'MaxEniCountExceeded',
      ].includes(code),
    type: 'EcsQuotaExceeded',
  },
  {
    match: (code) => code === 'InvalidInstanceId.NotFound' || code === 'InvalidEcsId.NotFound',
    type: 'EcsInstanceNotFound',
  },
  { match: (code) => code.endsWith('.NotFound'), type: 'EcsNotFound' },
  { match: (code) => code === 'InvalidOperation.InvalidEniState', type: 'EcsInvalidState' },
  {
    match: (code) =>
      [
        'InternalError',
        'ServiceUnavailable',
        'Operation.Conflict',
        'OperationConflict',
        'IdempotentProcessing',
        'LastTokenProcessing',
      ].includes(code) || code.startsWith('ServiceUnavailable'),
    type: 'EcsTransient',
  },
  {
    match: (code) =>
      code.startsWith('Invalid') ||
      code.startsWith('Forbidden') ||
      code.startsWith('Missing') ||
      code.startsWith('Unsupported') ||
      code.startsWith('Idempotent') ||
      ['IncompleteSignature', 'SignatureDoesNotMatch', 'SignatureNonceUsed', 'IllegalTimestamp'].includes(code),
    type: 'EcsInvalidRequest',
  },
];

const TRANSPORT_CODES = ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND', 'EHOSTUNREACH'];

function field(err: unknown, name: string): unknown {
  return typeof err === 'object' && err !== null ? (err as Record<string, unknown>)[name] : undefined;
}

function stringField(err: unknown, name: string): string | undefined {
  const value = field(err, name);
  return typeof value === 'string' && value !== '' && value !== 'undefined' ? value : undefined;
}

/**
 * Classifies anything an SDK call threw: API errors by their `code`, transport errors by
 * `code`/`name`, anything else (a non-JSON gateway page, a malformed body) as transient. Never throws.
 */
export function classifyEcsError(input: { operation: EcsOperation; error: unknown }): EcsFailure {
  const { operation, error } = input;
  const name = stringField(error, 'name') ?? '';
  const code = stringField(error, 'code') ?? (name === 'RequestTimeoutError' ? 'RequestTimeout' : name || 'Unknown');
  const requestId = stringField(error, 'requestId');
  const message = error instanceof Error ? error.message : String(error);
  const isTransport = name === 'RequestTimeoutError' || name === 'SyntaxError' || TRANSPORT_CODES.includes(code);
  const byCode = CODE_TYPES.find((entry) => entry.match(code))?.type;
  const type: EcsFailureType = isTransport
    ? 'EcsTransient'
    : (byCode ?? (name === 'ServerError' ? 'EcsTransient' : 'EcsUnknown'));
  const failure: EcsFailure = {
    type,
    operation,
    code,
    message,
    retryable: !NON_RETRYABLE_ECS_FAILURES.includes(type),
  };
  if (requestId !== undefined) failure.requestId = requestId;
  const retryAfter = field(error, 'retryAfter');
  if (typeof retryAfter === 'number' && Number.isFinite(retryAfter) && retryAfter > 0)
    failure.retryAfterMs = retryAfter;
  return failure;
}

/** The error an {@link EcsApi} call rejects with: the classified failure, with the SDK error as its cause. */
export class EcsCallError extends Error {
  readonly failure: EcsFailure;

  constructor(failure: EcsFailure, options?: { cause?: unknown }) {
    super(
      `${failure.operation} failed: ${failure.code}${failure.requestId === undefined ? '' : ` (RequestId ${failure.requestId})`}: ${failure.message}`,
      options,
    );
    this.name = 'EcsCallError';
    this.failure = failure;
  }
}
