import type { NodeSpec } from '../../../ipam/index.js';
import type { CarriedState } from '../memory/carried-state.js';

/**
 * `spec.eni.enableIPPrefix` is fixed when the workflow first sees the daemon's spec (Terway writes it once, at CR
 * creation). Returns the node's mode and, when the spec says otherwise now, the value it asks for (to be told in a
 * Warning Event; nothing changes).
 */
export function settlePrefixMode(input: { state: CarriedState; spec: Pick<NodeSpec, 'eni'> }): {
  prefixMode: boolean;
  ignoredChange?: boolean;
} {
  const asked = input.spec.eni?.enableIPPrefix === true;
  input.state.prefixMode ??= asked;
  const prefixMode = input.state.prefixMode;
  return prefixMode === asked ? { prefixMode } : { prefixMode, ignoredChange: asked };
}

/** The spec with the node's recorded mode, whatever the CR says now. */
export function withPrefixMode<T extends Pick<NodeSpec, 'eni'>>(spec: T, prefixMode: boolean): T {
  if ((spec.eni?.enableIPPrefix === true) === prefixMode) return spec;
  return { ...spec, eni: { ...spec.eni, enableIPPrefix: prefixMode } };
}
