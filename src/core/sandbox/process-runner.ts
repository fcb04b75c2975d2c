import { constants } from 'node:os';

/**
 * Runs one process to completion: the seam between Kiln's execution strategies (local, sandboxed)
 * and the executor's local runner on one side, and the operating system on the other.
 */

/**
 * Where a stream of the process goes: a file (created or truncated), memory up to a limit, or
 * `spill`: memory while the stream stays within `memoryBytes` (no file is made: most actions print
 * little, and creating, reading and removing a file per stream costs more than the action), else
 * the whole stream in a file at `path`, created once the stream outgrows memory; nothing is dropped.
 */
export type OutputSink =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'buffer'; readonly limitBytes: number }
  | { readonly kind: 'spill'; readonly memoryBytes: number; readonly path: string };

export interface ProcessSpec {
  /** argv[0] is looked up on `env.PATH` when it has no slash. */
  readonly argv: readonly string[];
  /** Absolute working directory. */
  readonly cwd: string;
  /** The complete environment: nothing is inherited from Kiln's own. */
  readonly env: Readonly<Record<string, string>>;
  /** Wall-time limit; when reached the whole process tree is killed. 0 or absent: none. */
  readonly timeoutMs?: number;
  readonly stdout?: OutputSink;
  readonly stderr?: OutputSink;
  /**
   * Confinement for sandboxing runners: the only host paths the process may write (the working
   * directory is always one) and the only other host paths it may read besides the system
   * directories. The plain runner does not confine and ignores both.
   */
  readonly writablePaths?: readonly string[];
  readonly readOnlyPaths?: readonly string[];
  /** Sandboxing runners: absolute paths mounted as empty, private tmpfs (`--sandbox_tmpfs_path`). */
  readonly tmpfsPaths?: readonly string[];
  /**
   * For sandboxing runners only (a plain runner refuses it): a file tree made inside the sandbox,
   * where `cwd` lies, rather than on the host. Creating and removing directories on the host costs
   * 80-300 us each on some file systems; inside, they live in the sandbox's own memory and vanish
   * with it, and so does anything the process writes there outside `mounts`.
   */
  readonly tree?: SandboxTree;
  /** Aborting kills the process tree as a timeout does (without setting `timedOut`). */
  readonly signal?: AbortSignal | undefined;
  /**
   * cgroup.procs files (one per hierarchy) the process joins before it runs anything: it and all it
   * forks are in those cgroups from the first instruction. The caller makes and removes them.
   */
  readonly cgroups?: readonly string[] | undefined;
}

/**
 * Paths inside the sandbox are absolute; entries are made in this order: mounts, dirs, symlinks.
 * Symlinks made under a mount land on the host; the runner removes them again when the process
 * ends, so a mount's host directory then holds only what the process wrote.
 */
export interface SandboxTree {
  /** Host directories mounted writable inside (what is made below them later lands on the host). */
  readonly mounts: readonly { readonly host: string; readonly at: string }[];
  readonly dirs: readonly string[];
  readonly symlinks: readonly { readonly path: string; readonly target: string }[];
}

export interface ProcessResult {
  /** The exit status, or null when a signal ended the process. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly timedOut: boolean;
  /** Captured bytes of buffer and unspilled spill sinks (empty for file sinks). */
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  /** A buffer sink reached its limit; later bytes were dropped. */
  readonly stdoutTruncated: boolean;
  readonly stderrTruncated: boolean;
  /** A spill sink outgrew memory: its whole stream is in its file and the bytes above are empty. */
  readonly stdoutSpilled?: boolean;
  readonly stderrSpilled?: boolean;
  readonly wallTimeMs: number;
}

export interface ProcessRunner {
  /** `local` or `linux-sandbox`, as Bazel names the strategies in its summary. */
  readonly name: string;
  /**
   * The largest `tree` this runner takes (bwrap gets it on its command line); none when absent. A
   * caller with a larger one builds the tree on the host and mounts it instead.
   */
  readonly treeLimit?: { readonly entries: number; readonly bytes: number };
  run(spec: ProcessSpec): Promise<ProcessResult>;
}

/** 1 MiB: the default limit of a buffer sink. */
export const DEFAULT_OUTPUT_LIMIT_BYTES = 1 << 20;

/** A shell-like single exit status: the code, or 128 + the signal number. */
export function exitStatusOf(result: Pick<ProcessResult, 'exitCode' | 'signal'>): number {
  if (result.exitCode !== null) return result.exitCode;
  const n = result.signal ? constants.signals[result.signal] : undefined;
  return 128 + (n ?? constants.signals.SIGKILL);
}
