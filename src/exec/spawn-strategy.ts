import { ExitCode, KilnError } from '../core/index.js';
import type { ProcessResult } from '../core/sandbox/index.js';
import { LIVE_OUTPUT_ENV, type Action, type ActionKey, type InputEntry, type ProducedOutput } from '../actions/index.js';

/** Everything a strategy needs to run one action's process. */
export interface Spawn {
  readonly action: Action;
  /** Every input with its digest (what a remote strategy uploads). */
  readonly inputs: readonly InputEntry[];
  /** The REAPI description and key, computed on the first call. */
  readonly remoteKey: () => ActionKey;
  /** The command to exec (already rewritten to a script when too long). */
  readonly argv: readonly string[];
  /** The action environment; the strategy adds TMPDIR. */
  readonly env: Readonly<Record<string, string>>;
  readonly execRoot: string;
  /** A fresh, empty directory owned by this spawn (TMPDIR, the sandbox's outputs); removed afterwards. */
  readonly scratchDir: string;
  /** The script argv runs when the command line was too long (see command-script.ts). */
  readonly commandScript?: string;
  /** Aborting kills the process tree (Ctrl-C). */
  readonly signal?: AbortSignal | undefined;
  /** A named pipe for the process's live output (live-output.ts): local strategies hand it over, see `spawnEnv`. */
  readonly liveOutput?: string;
  /**
   * Runs `start` (the process itself) holding one of the --jobs slots; a strategy prepares and
   * cleans up outside it, so that work overlaps with other actions' processes. Absent: no limit.
   * `runnerName` says where it runs (progress); `localSlot: false` (remote execution) takes no slot.
   */
  readonly withSlot?: (start: () => Promise<ProcessResult>, how?: SlotUse) => Promise<ProcessResult>;
  /**
   * Dynamic execution: a branch calls this before it writes outputs into the execroot; true for
   * the first caller only. A branch that gets false writes nothing and throws `SpawnLost`.
   */
  readonly claim?: () => boolean;
}

/** How a process uses the --jobs slots. */
export interface SlotUse {
  /** Where it runs (progress). */
  readonly runnerName?: RunnerName;
  /** false: remote execution, no local slot. */
  readonly localSlot?: boolean;
  /** True once the process's failure no longer matters (the losing branch of a race was cancelled). */
  readonly abandoned?: () => boolean;
}

/**
 * An action that failed because the remote system did (a call that gave up, a result refused), not
 * because its command did. Bazel's exit code for it is 34 (FailureDetails Spawn EXECUTION_FAILED),
 * and that code wins over a build failure's 1 when both happen.
 */
export class RemoteExecutionFailure extends KilnError {
  readonly exitCode = ExitCode.REMOTE_ERROR;
}

/** Thrown by a branch of dynamic execution that finished second: it wrote nothing. */
export class SpawnLost extends Error {
  constructor() {
    super('the other branch of dynamic execution finished first');
  }
}

/** `spawn.withSlot`, or a direct call where the caller sets no limit. */
export function inSlot(spawn: Spawn, start: () => Promise<ProcessResult>, how?: SlotUse): Promise<ProcessResult> {
  return spawn.withSlot ? spawn.withSlot(start, how) : start();
}

/**
 * The process's environment: the action's, TMPDIR, and the live output pipe's path when there is
 * one. The last two are per run, never part of the action's key.
 */
export function spawnEnv(spawn: Spawn, tmpDir: string): Record<string, string> {
  return { ...spawn.env, TMPDIR: tmpDir, ...(spawn.liveOutput ? { [LIVE_OUTPUT_ENV]: spawn.liveOutput } : {}) };
}

/** How Bazel's summary names where a process ran. */
type RunnerName = 'local' | 'linux-sandbox' | 'remote';

/** A finished spawn: the process result, and where it ran when that differs from the strategy's runner. */
export interface SpawnOutcome extends ProcessResult {
  /** `remote cache hit` when the executor answered from its cache; `local` after a remote fallback. */
  readonly ranAs?: RunnerName | 'remote cache hit';
  /** Said with --verbose_failures (the remote operation and endpoint). */
  readonly detail?: string;
  /** Outputs a remote run left on the server (not in the execroot), by digest. */
  readonly remoteOutputs?: readonly ProducedOutput[];
}

/** How an action's process is run; after `exec` returns, its outputs are in the execroot. */
export interface SpawnStrategy {
  /** The flag value that selects it (`--spawn_strategy=local`). */
  readonly name: 'local' | 'sandboxed' | 'remote' | 'dynamic';
  /** How Bazel's summary counts processes it ran: `local`, `linux-sandbox` or `remote`. */
  readonly runnerName: RunnerName;
  exec(spawn: Spawn): Promise<SpawnOutcome>;
}

/** Output kept per stream; more is cut, so a chatty action cannot exhaust memory. */
export const CAPTURED_OUTPUT_LIMIT_BYTES = 8 * 1024 * 1024;
