/** The problem vocabulary of Node CR validation, shared by the entry point and the spec and status walks. */

/** Every {@link SpecProblemCode}, for exhaustive tables (metrics labels, event reasons). */
export const SPEC_PROBLEM_CODES = [
  'missing',
  'invalidType',
  'outOfRange',
  'inverted',
  'unknownValue',
  'malformedIp',
  'malformedCidr',
  'malformedTime',
  'malformedDuration',
  'wrongFamily',
  'keyMismatch',
  'noIpFamily',
  'unsupported',
  'emptyKey',
  'outsideCidr',
] as const;
/** What is wrong with one field of the CR. */
export type SpecProblemCode = (typeof SPEC_PROBLEM_CODES)[number];

/** Every {@link SpecProblemSeverity}, most severe first. */
export const SPEC_PROBLEM_SEVERITIES = ['blocking', 'warning', 'info'] as const;
/** `blocking` stops allocation for the node, `warning` dropped a field or entry, `info` is an expected state. */
export type SpecProblemSeverity = (typeof SPEC_PROBLEM_SEVERITIES)[number];

/** One problem found in a Node CR; `message` is a self-contained sentence fit for a Kubernetes Event. */
export interface SpecProblem {
  /** Dotted path of the field, map keys in brackets: `status.networkInterfaces["eni-1"].ipv4["10.0.0.9"]`. */
  path: string;
  code: SpecProblemCode;
  severity: SpecProblemSeverity;
  message: string;
}
