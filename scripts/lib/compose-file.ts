/**
 * temporal/docker-compose.yml as data: what the PostgreSQL-backed test server takes from it (the server's
 * environment, the one-shot jobs' scripts) and what the drift test compares with temporal-settings.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { loadAllYaml } from '@kubernetes/client-node';

import { REPO_ROOT } from './tools-config.js';

export const COMPOSE_FILE = join(REPO_ROOT, 'temporal', 'docker-compose.yml');

export interface ComposeService {
  readonly image?: string;
  readonly environment?: Readonly<Record<string, string>> | readonly string[];
  readonly entrypoint?: readonly string[];
  readonly command?: readonly string[];
}

/** The services of the compose file (no `${}` interpolation: the file uses none). */
export function readComposeServices(text = readFileSync(COMPOSE_FILE, 'utf8')): Record<string, ComposeService> {
  const [document] = loadAllYaml(text) as unknown[];
  if (typeof document !== 'object' || document === null || !('services' in document)) {
    throw new Error(`${COMPOSE_FILE} has no services`);
  }
  return (document as { services: Record<string, ComposeService> }).services;
}

export function composeService(services: Record<string, ComposeService>, name: string): ComposeService {
  const found = services[name];
  if (found === undefined) throw new Error(`${COMPOSE_FILE} has no service ${name}`);
  return found;
}

/** A service's environment as a map (from the map or the list form, YAML merge keys `<<:` applied). */
export function composeEnvironment(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (!Array.isArray(env)) {
    const { '<<': merged, ...own } = env as Record<string, unknown>;
    const bases = (Array.isArray(merged) ? merged : merged === undefined ? [] : [merged]) as Record<string, string>[];
    return Object.assign({}, ...bases, own) as Record<string, string>;
  }
  return Object.fromEntries(
    (env as readonly string[]).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

/** The argv a one-shot job runs (entrypoint, then command), with compose's `$$` escape undone. */
export function composeJobArgv(service: ComposeService): string[] {
  return [...(service.entrypoint ?? []), ...(service.command ?? []).map((part) => part.replaceAll('$$', '$'))];
}

/** The release of an image reference, e.g. `1.30.1` of `temporalio/server:1.30.1`. */
export function imageTag(service: ComposeService): string {
  const image = service.image ?? '';
  return image.slice(image.lastIndexOf(':') + 1);
}
