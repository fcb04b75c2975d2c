import { mkdir, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Action } from '../actions/index.js';
import type { SandboxSupport } from '../core/sandbox/index.js';
import type { RemoteClient } from '../remote/index.js';
import { ActionRunner } from './action-runner.js';
import { ActionSpawners } from './action-spawners.js';
import { buildActionGraph } from './action-graph.js';
import { checkedFiles } from './checked-files.js';
import { DiskSpawnCache } from './disk-spawn-cache.js';
import type { ExecutionReporter, ExecutionSummary } from './execution-reporter.js';
import { FileDigestCache } from './file-digest-cache.js';
import { LocalActionCache } from './local-action-cache.js';
import { LocalActionSpawnCache } from './local-action-spawn-cache.js';
import { ProcessSlots } from './process-slots.js';
import type { DownloadMode, RemoteOutputs } from './remote-outputs.js';
import type { RemoteStrategy } from './remote-strategy.js';
import { ScratchDirectories } from './scratch-directories.js';
import type { SandboxPaths } from './sandboxed-strategy.js';
import { cachePolicy, type SpawnCache } from './spawn-cache.js';
import { SpawnCacheChain } from './spawn-cache-chain.js';
import type { StrategyFlags } from './strategy-selection.js';

/** Actions past their cache lookup at once (preparing, waiting for a process slot, running, storing). */
const ACTIONS_IN_FLIGHT = 32;
/**
 * Actions hashing inputs and looking up caches at once. Higher: a remote cache lookup is a call in
 * flight, not local work, and the more are in flight the more outputs each BatchReadBlobs carries
 * (a fully cached build is bound by round trips otherwise).
 */
const LOOKUPS_IN_FLIGHT = 256;

export interface ExecutionOptions {
  /** Where actions run: exec paths are relative to it. Source files must already be reachable in it. */
  readonly execRoot: string;
  /** Holds the persistent caches (`cache/`) and per-action scratch directories (`sandbox/`). */
  readonly outputBase: string;
  /** The client's environment: PATH is taken from it, nothing else. */
  readonly clientEnv: Readonly<Record<string, string | undefined>>;
  /** What every action gets besides its own variables (buildActionEnvironment); default: the client's PATH. */
  readonly actionEnv?: Readonly<Record<string, string>>;
  /** What every action of an exec configuration gets instead (`--host_action_env`); actionEnv when absent. */
  readonly hostActionEnv?: Readonly<Record<string, string>>;
  /** `--jobs`: processes at once; the number of cores by default. */
  readonly jobs?: number;
  /** `--local_test_jobs`: test processes at once on this machine (within --jobs); unbounded beyond --jobs when absent. */
  readonly localTestJobs?: number;
  /** `--keep_going`: after a failure, go on with every action that does not depend on it. */
  readonly keepGoing?: boolean;
  /** `--disk_cache=DIR`. */
  readonly diskCache?: string;
  readonly strategies?: StrategyFlags;
  /** Whether bubblewrap can sandbox here (the fallback of the native sandbox); detected lazily when absent. */
  readonly sandbox?: SandboxSupport;
  /** `--sandbox_writable_path` and `--sandbox_tmpfs_path`: absolute host paths given to every sandboxed action. */
  readonly sandboxPaths?: SandboxPaths;
  /** false: sandbox with bubblewrap even where the native sandbox runs (tests of that fallback). */
  readonly nativeSandbox?: boolean;
  /**
   * The helper processes actions start from, when the caller started them early (and closes them);
   * otherwise the build starts its own on first use and closes them at the end.
   */
  readonly spawners?: ActionSpawners;
  /** Aborting (Ctrl-C) kills running processes and starts no more; the build then fails. */
  readonly signal?: AbortSignal;
  /** `--remote_executor` / `--remote_cache`: the remote cache joins the cache chain, the remote strategy the strategies. */
  readonly remote?: RemoteExecutionOptions;
  /**
   * Exec paths the build must produce (the requested targets' files, test results): only their
   * producers run, with the producers of those actions' derived inputs, transitively. Every action
   * runs when absent.
   */
  readonly requested?: readonly string[];
  /**
   * Actions whose output is wanted live (`kiln test --test_output=streamed`): when this gives a
   * receiver, the action's local process finds a named pipe's path in KILN_LIVE_OUTPUT, and all it
   * writes there reaches the receiver as written, before `actionFinished`. A remote run has no pipe.
   */
  readonly liveOutput?: (action: Action) => ((chunk: Buffer) => void) | undefined;
  /** The summary lists the files the build's actions checked, when it can (`checkedFiles`): the null build record. */
  readonly listCheckedFiles?: boolean;
}

export interface RemoteExecutionOptions {
  /** The build's client (the caller closes it). */
  readonly client: RemoteClient;
  /** `--remote_accept_cached` (default true). */
  readonly acceptCached: boolean;
  /** `--remote_upload_local_results` (default true). */
  readonly uploadLocalResults: boolean;
  /** `--remote_local_fallback`: run locally when remote execution fails. */
  readonly localFallback: boolean;
  /** `--remote_default_exec_properties`: the platform of every action (part of its key). */
  readonly defaultExecProperties?: Readonly<Record<string, string>>;
  /** `--remote_download_outputs` (default all). */
  readonly downloadOutputs?: DownloadMode;
  /** Exec paths of the requested targets' outputs (downloaded with `toplevel`). */
  readonly topLevelOutputs?: readonly string[];
}

/** Files of the output base that belong to execution. */
export function executionPaths(outputBase: string) {
  return {
    fileDigestCache: join(outputBase, 'cache', 'file-digests.json'),
    actionCache: join(outputBase, 'cache', 'action-cache.bin'),
    scratch: join(outputBase, 'sandbox'),
  };
}

/**
 * Runs the actions of `registered` that `options.requested` needs (all of them when it is absent) in
 * dependency order, at most `jobs` at a time, skipping those whose result is cached, and reports
 * progress to `reporter`. Resolves with the summary; a failed action makes `success` false, it does
 * not throw.
 * @throws KilnError when the action graph itself is invalid (conflicting outputs, cycles, dangling
 *   derived inputs) or a strategy flag cannot be honoured.
 */
export async function executeActions(registered: readonly Action[], options: ExecutionOptions, reporter: ExecutionReporter): Promise<ExecutionSummary> {
  const graph = buildActionGraph(registered, options.requested);
  const { actions } = graph;
  const paths = executionPaths(options.outputBase);
  await rm(paths.scratch, { recursive: true, force: true });
  await mkdir(paths.scratch, { recursive: true });
  const [digestCache, actionCache] = await Promise.all([FileDigestCache.load(paths.fileDigestCache), LocalActionCache.load(paths.actionCache)]);
  const caches: SpawnCache[] = [new LocalActionSpawnCache(actionCache, options.execRoot, digestCache, options.remote !== undefined)];
  const dir = options.diskCache;
  // Loaded with --disk_cache only: it reads REAPI results through the remote layer's codecs.
  if (dir) caches.push(new DiskSpawnCache(async () => (await import('./disk-cache.js')).DiskCache.open(dir), options.execRoot, digestCache));
  const remote = options.remote;
  const warn = (message: string) => reporter.warning(message);
  let remoteOutputs: RemoteOutputs | undefined;
  let remoteStrategy: typeof RemoteStrategy | undefined;
  if (remote) {
    const parts = await import('./remote-parts.js');
    remoteOutputs = new parts.RemoteOutputs(
      remote.client,
      options.execRoot,
      digestCache,
      remote.downloadOutputs ?? 'all',
      new Set(remote.topLevelOutputs ?? []),
    );
    caches.push(new parts.RemoteSpawnCache(remote.client, options.execRoot, digestCache, { ...remote, warn, outputs: remoteOutputs }));
    remoteStrategy = parts.RemoteStrategy;
  }
  const cacheChain = new SpawnCacheChain(caches, warn);
  const jobs = Math.max(1, options.jobs ?? availableParallelism());
  const spawners = options.spawners ?? new ActionSpawners(options.clientEnv, options.sandbox, { nativeSandbox: options.nativeSandbox });
  const scratch = new ScratchDirectories(paths.scratch, (message) => reporter.warning(message));
  // Only the processes themselves are bounded by --jobs; actions past their lookup by ACTIONS_IN_FLIGHT.
  const pastLookup = new ProcessSlots(Math.max(jobs, ACTIONS_IN_FLIGHT));
  const run = new ActionRunner(
    options,
    reporter,
    digestCache,
    cacheChain,
    scratch,
    new ProcessSlots(jobs),
    pastLookup,
    spawners,
    remoteOutputs,
    remoteStrategy,
  );

  reporter.buildStarted(actions.length);
  const inFlight = Math.max(jobs, ACTIONS_IN_FLIGHT, LOOKUPS_IN_FLIGHT);
  const waitingOn = new Map<Action, number>(actions.map((a) => [a, graph.dependencies.get(a)!.length]));
  const ready = actions.filter((a) => waitingOn.get(a) === 0);
  let nextReady = 0;
  let running = 0;
  let finished = 0;
  const allDone = new Promise<void>((resolve) => {
    const pump = () => {
      const stopped = run.stopping();
      while (!stopped && running < inFlight && nextReady < ready.length) start(ready[nextReady++]!);
      if (running === 0 && (stopped || nextReady === ready.length)) resolve();
    };
    const start = (action: Action) => {
      running++;
      void run.execute(action).then((outcome) => {
        running--;
        if (outcome !== 'skipped') finished++;
        if (outcome === 'done') {
          for (const dependent of graph.dependents.get(action)!) {
            const left = waitingOn.get(dependent)! - 1;
            waitingOn.set(dependent, left);
            if (left === 0) ready.push(dependent);
          }
        }
        pump();
      });
    };
    pump();
  });
  try {
    await allDone;
  } finally {
    await scratch.settled();
    if (!options.spawners) await spawners.close();
  }

  await Promise.all([digestCache.save(), actionCache.save()]);
  await rm(paths.scratch, { recursive: true, force: true });
  const success = run.failures.length === 0 && finished === actions.length;
  // Every action's result is now in the local action cache, so the same build again finds each up to date.
  const allRecorded = options.listCheckedFiles === true && success && !options.remote && actions.every((a) => cachePolicy(a).local);
  const checked = allRecorded ? checkedFiles(actions, options.execRoot, digestCache) : undefined;
  const summary: ExecutionSummary = {
    success,
    totalActions: finished,
    processes: { ...run.processes },
    failures: run.failures,
    ...(checked ? { checkedFiles: checked } : {}),
  };
  reporter.buildFinished(summary);
  return summary;
}
