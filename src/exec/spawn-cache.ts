import type { Action, ActionKey, InputEntry, ProducedOutput } from '../actions/index.js';
import type { ProcessKind } from './execution-reporter.js';

/** What the caches know of one action about to run. */
export interface CacheRequest {
  readonly action: Action;
  /** The environment the process runs with (PATH included), as it goes into both keys. */
  readonly env: Readonly<Record<string, string>>;
  readonly inputs: readonly InputEntry[];
  /** The local action cache's key (localActionKey). */
  readonly localKey: string;
  /** The REAPI description and key, computed on the first call: only the shared caches need it. */
  readonly remoteKey: () => ActionKey;
}

/** The outputs are in place in the execroot with these digests. */
interface CacheHit {
  readonly kind: 'hit';
  readonly outputs: readonly ProducedOutput[];
  /** The outputs stayed on the remote server: they are known by digest only. */
  readonly remoteOnly?: boolean;
  /** How Bazel's summary counts it; undefined for the local action cache (not a process). */
  readonly processKind?: ProcessKind;
}

/** Not cached here: `store` records the action's result once it has run successfully. */
export interface CacheMiss {
  readonly kind: 'miss';
  store(result: SpawnResult): Promise<void>;
}

export type CacheLookup = CacheHit | CacheMiss;

/** A successful run: its outputs (in the execroot, unless `remoteOnly`) and where it ran. */
export interface SpawnResult {
  readonly outputs: readonly ProducedOutput[];
  /** The outputs stayed on the remote server (--remote_download_outputs=minimal|toplevel). */
  readonly remoteOnly?: boolean;
  /** How the run was counted: a runner name, or the cache that answered it. */
  readonly ranAs: ProcessKind | undefined;
}

/**
 * Bazel's SpawnCache: `lookup` gives a hit (the outputs are in place) or a handle that stores the
 * result after the run. The local action cache, the disk cache and the remote cache implement it.
 */
export interface SpawnCache {
  lookup(request: CacheRequest): Promise<CacheLookup>;
}

/** A miss that stores nothing (the cache does not apply to the action). */
export const NOT_CACHED: CacheMiss = { kind: 'miss', store: async () => {} };

/** Which caches an action's tags allow, as Bazel reads them. */
export function cachePolicy(action: Action): { readonly local: boolean; readonly shared: boolean } {
  const requirements = new Set<string>(action.executionRequirements);
  const local = !requirements.has('no-cache');
  // no-remote-cache, no-remote and local keep results off the disk and remote caches; so does
  // in-process work, which the REAPI key does not describe (its content is no Command).
  const shared = local && !action.inProcess && !requirements.has('no-remote-cache') && !requirements.has('no-remote') && !requirements.has('local');
  return { local, shared };
}
