import type { OutputSink } from '../../src/core/sandbox/index.js';

/** One platform property of the action (REAPI Platform.Property), in the order the action lists them. */
export interface PlatformProperty {
  readonly name: string;
  readonly value: string;
}

/** A Command to run in a build directory that already holds the action's input root. */
export interface RunRequest {
  /** Absolute host path of the prepared input root; outputs are written beneath it. */
  readonly buildDirectory: string;
  /** Command.arguments, unchanged; arguments[0] is looked up on the command's own PATH. */
  readonly arguments: readonly string[];
  /** Command.environment_variables: the complete environment, nothing added. */
  readonly environment: Readonly<Record<string, string>>;
  /** Command.working_directory, relative to the input root ('' for the root itself). */
  readonly workingDirectory: string;
  readonly platform: readonly PlatformProperty[];
  /** Wall-time limit in milliseconds; 0 for none. */
  readonly timeoutMs: number;
  readonly stdout: OutputSink;
  readonly stderr: OutputSink;
  /** Cancels the run (the action's waiters are gone); the process or container is killed. */
  readonly signal?: AbortSignal;
}

export interface RunResult {
  /** The exit status; 128 + signal number when a signal ended the command (137 when killed). */
  readonly exitCode: number;
  readonly timedOut: boolean;
  /** The container was killed because it went beyond its memory limit (Docker runner only). */
  readonly outOfMemory: boolean;
  /** Captured bytes of buffer sinks and of spill sinks that stayed in memory (empty for file sinks). */
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  readonly stdoutTruncated: boolean;
  readonly stderrTruncated: boolean;
  /** A spill sink outgrew memory: the whole stream is in its file. */
  readonly stdoutSpilled: boolean;
  readonly stderrSpilled: boolean;
  /** When the command started and ended (ms since the epoch), for ExecutedActionMetadata. */
  readonly startedAtMs: number;
  readonly completedAtMs: number;
}

/** Runs Commands for the executor: in a Docker container, or as a local (sandboxed) process. */
export interface Runner {
  /** `docker`, `linux-sandbox` or `local`. */
  readonly name: string;
  /** How the runner enforces each action's memory, pids and CPU limits (`docker`, `cgroup v2`...), or false when it does not. */
  readonly enforcesLimits?: string | false;
  /**
   * Who the action's processes are to the executor's files: `separate`, another user without
   * capabilities (read-only cached files owned by the executor can be hard-linked in); `sandboxed`,
   * the executor's user (or root) seeing only the build directory (inputs must be copies: it could
   * chmod a shared inode); `unconfined`, a plain process (copies, checked against their digest, since
   * it could have rewritten the cache). Absent: `unconfined`.
   */
  readonly actionUser?: 'separate' | 'sandboxed' | 'unconfined';
  run(request: RunRequest): Promise<RunResult>;
  /** Releases what the runner holds beyond its runs (the local runner's helper process). */
  close?(): Promise<void>;
}
