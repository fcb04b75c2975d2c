/** Where a command writes. Tests pass buffers; the binary passes the process streams. */
export interface CliIO {
  readonly stdout: { write(chunk: string | Uint8Array): unknown };
  readonly stderr: { write(chunk: string | Uint8Array): unknown };
  /** Whether stderr is a terminal (server roles log text there, JSON lines otherwise); tests' buffers are not. */
  readonly stderrIsTTY?: boolean;
  /** Current directory the command resolves relative paths against. */
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Resolves when the user interrupts (Ctrl-C); long-running commands stop cleanly on it. */
  readonly interrupted?: Promise<void>;
  /**
   * Runs synchronous work that may never return (loading, analysis, a query: Starlark code) so that
   * an interrupt still ends it; throws `InterruptedBySigint` when SIGINT (or SIGTERM, relayed as SIGINT:
   * sigterm-relay.ts) stopped it. Tests' buffer
   * IO leaves it out and the work just runs (see `interruptibly`).
   */
  runInterruptibly?<T>(work: () => T): T;
  /** How long a command may take to stop after an interrupt (servers take longer than builds). */
  setInterruptGrace?(ms: number): void;
  /** Kiln's version (sent to remote servers in RequestMetadata). */
  readonly version?: string;
}

/** Runs `work` through the IO's `runInterruptibly` when it has one. */
export function interruptibly<T>(io: CliIO, work: () => T): T {
  return io.runInterruptibly ? io.runInterruptibly(work) : work();
}

/** A command's whole face: takes its arguments (after the command name), returns an exit code. */
export type CommandMain = (args: string[], io: CliIO) => Promise<number>;
