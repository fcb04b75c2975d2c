import type { Action } from '../analysis/index.js';
import type { ProcessResult } from './run-process.js';

/** Everything a strategy needs to run one action's process. */
export interface Spawn {
  readonly action: Action;
  /** The command to exec (already rewritten to a script when too long). */
  readonly argv: readonly string[];
  /** The action environment (key environment plus TMPDIR). */
  readonly env: Readonly<Record<string, string>>;
  readonly execRoot: string;
  /** A fresh directory owned by this spawn (scripts, temp files, the sandbox); removed afterwards. */
  readonly scratchDir: string;
  /** TMPDIR of the process, inside scratchDir. */
  readonly tmpDir: string;
}

/** How an action's process is run; after `exec` returns, its outputs are in the execroot. */
export interface SpawnStrategy {
  /** The flag value that selects it (`--spawn_strategy=local`). */
  readonly name: 'local' | 'sandboxed';
  /** How Bazel's summary counts processes it ran: `local` or `linux-sandbox`. */
  readonly runnerName: 'local' | 'linux-sandbox';
  exec(spawn: Spawn): Promise<ProcessResult>;
}
