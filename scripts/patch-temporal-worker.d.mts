// Types of scripts/patch-temporal-worker.mjs (plain ESM: it runs under whatever Node runs `npm ci`), for its test.
export const SDK_PACKAGE: string;
export const SDK_VERSION: string;
export const MARK: string;
export const GUARD_FILE: string;
export const GUARD_SOURCE: string;

export interface PatchEdit {
  readonly find: string;
  readonly replace: string;
  readonly count: number;
}

export interface PatchedFile {
  readonly path: string;
  /** sha256 of the SDK's file as published. */
  readonly original: string;
  /** sha256 of the file once patched. */
  readonly patched: string;
  readonly edits: readonly PatchEdit[];
}

export const PATCHED_FILES: readonly PatchedFile[];
export function sha256(text: string): string;
export function applyEdits(file: PatchedFile, text: string): string;
export function revertEdits(file: PatchedFile, text: string): string;
export function patchTemporalWorker(packageDir: string, guardSource?: string): string[];
export function installedPackageDir(projectRoot: string): string;
