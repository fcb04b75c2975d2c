import { InvalidArgumentError } from '../src/core/index.js';

/**
 * Path segments REAPI reserves for resource names (`{instance}/blobs/...`, `{instance}/uploads/...`):
 * an instance name containing one could not be told apart from the rest of a resource name.
 */
export const RESERVED_INSTANCE_SEGMENTS: ReadonlySet<string> = new Set([
  'blobs',
  'uploads',
  'actions',
  'actionResults',
  'operations',
  'capabilities',
  'compressed-blobs',
]);

/**
 * The problem with an instance name, or undefined when it is acceptable. `""` is the default instance;
 * otherwise `/`-separated non-empty segments, none of them reserved.
 */
export function instanceNameProblem(name: string): string | undefined {
  if (name === '') return undefined;
  for (const segment of name.split('/')) {
    if (segment === '') return `instance name ${quotedName(name)} has an empty path segment`;
    if (RESERVED_INSTANCE_SEGMENTS.has(segment)) {
      return `instance name ${quotedName(name)} contains the reserved segment "${segment}"`;
    }
  }
  return undefined;
}

/** Longest part of a client's name an error message repeats. */
const QUOTED_NAME_LIMIT = 200;

/**
 * A client's name quoted for an error message, cut short when long: a status message travels in
 * the HTTP/2 trailers, and one over their size limit never reaches the client, which then waits
 * for its deadline instead of reading the error.
 */
export function quotedName(name: string): string {
  if (name.length <= QUOTED_NAME_LIMIT) return JSON.stringify(name);
  return `${JSON.stringify(name.slice(0, QUOTED_NAME_LIMIT))}... (${name.length} characters)`;
}

/** @throws InvalidArgumentError naming `field` when the name is not acceptable. */
export function checkInstanceName(name: string, field = 'instance_name'): void {
  const problem = instanceNameProblem(name);
  if (problem) throw new InvalidArgumentError(`${field}: ${problem}`);
}
