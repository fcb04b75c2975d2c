import type { ProcessResult } from '../core/index.js';
import type { Action } from '../actions/index.js';

/** Everything a strategy needs to run one action's process. */
export interface Spawn {
  readonly action: Action;
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
  readonly signal?: AbortSignal;
  /**
   * Runs `start` (the process itself) holding one of the --jobs slots; a strategy prepares and
   * cleans up outside it, so that work overlaps with other actions' processes. Absent: no limit.
   */
  readonly withSlot?: (start: () => Promise<ProcessResult>) => Promise<ProcessResult>;
}

/** `spawn.withSlot`, or a direct call where the caller sets no limit. */
export function inSlot(spawn: Spawn, start: () => Promise<ProcessResult>): Promise<ProcessResult> {
  return spawn.withSlot ? spawn.withSlot(start) : start();
}

/** How an action's process is run; after `exec` returns, its outputs are in the execroot. */
export interface SpawnStrategy {
  /** The flag value that selects it (`--spawn_strategy=local`). */
  readonly name: 'local' | 'sandboxed';
  /** How Bazel's summary counts processes it ran: `local` or `linux-sandbox`. */
  readonly runnerName: 'local' | 'linux-sandbox';
  exec(spawn: Spawn): Promise<ProcessResult>;
}

/** Output kept per stream; more is cut, so a chatty action cannot exhaust memory. */
export const CAPTURED_OUTPUT_LIMIT_BYTES = 8 * 1024 * 1024;
