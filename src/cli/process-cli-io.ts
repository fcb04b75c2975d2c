import { ExitCode } from '../core/index.js';
import type { CliIO } from './io.js';

/** How long Kiln may take to stop cleanly after Ctrl-C or SIGTERM before it exits anyway. */
export const INTERRUPT_GRACE_MS = 1500;

/**
 * The grace period of the servers (`cluster up`, `executor`, `scheduler`): stopping kills the
 * actions they run and removes their containers and build directories, which the engine may take
 * seconds to do on a loaded machine; leaving them behind is what stopping cleanly must avoid.
 */
export const SERVER_INTERRUPT_GRACE_MS = 30_000;

/** The parts of Node's `process` the binary's IO uses (tests pass a fake). */
export interface InterruptibleProcess {
  readonly stdout: CliIO['stdout'];
  readonly stderr: CliIO['stderr'];
  readonly env: CliIO['env'];
  cwd(): string;
  on(signal: 'SIGINT' | 'SIGTERM', listener: (signal: NodeJS.Signals) => void): unknown;
  removeListener(signal: 'SIGINT' | 'SIGTERM', listener: (signal: NodeJS.Signals) => void): unknown;
  exit(code: number): never;
}

/**
 * The binary's IO: the process's streams, and `interrupted`, which resolves on SIGINT or SIGTERM.
 *
 * The signals are listened to only once a command asks for `interrupted` (when it has something
 * to stop cleanly: running actions, servers). Before that, loading and analysis run on the main
 * thread without yielding, where a listener could not run; the default action of the signal ends
 * Kiln at once instead. Once listened to, an interrupt gives the command INTERRUPT_GRACE_MS to
 * stop (kill its actions, release the output base); then, or at a second interrupt, Kiln exits
 * with Bazel's exit code for an interrupted command, whatever it is waiting for.
 */
export function processCliIO(proc: InterruptibleProcess): CliIO & { setInterruptGrace(ms: number): void; dispose(): void } {
  let listening = false;
  let graceMs = INTERRUPT_GRACE_MS;
  let interruptedAt: NodeJS.Signals | undefined;
  let announce = () => {};
  const interrupted = new Promise<void>((resolve) => (announce = resolve));
  const onSignal = (signal: NodeJS.Signals) => {
    if (interruptedAt !== undefined) {
      proc.stderr.write(`ERROR: ${signal} again: exiting now.\n`);
      proc.exit(ExitCode.INTERRUPTED);
    }
    interruptedAt = signal;
    announce();
    const forced = setTimeout(() => {
      proc.stderr.write(`ERROR: Kiln did not stop within ${graceMs / 1000}s of ${signal}: exiting.\n`);
      proc.exit(ExitCode.INTERRUPTED);
    }, graceMs);
    // The grace period must not itself keep a command alive that has finished.
    forced.unref();
  };
  return {
    stdout: proc.stdout,
    stderr: proc.stderr,
    cwd: proc.cwd(),
    env: proc.env,
    setInterruptGrace(ms: number) {
      graceMs = ms;
    },
    get interrupted() {
      if (!listening) {
        listening = true;
        proc.on('SIGINT', onSignal);
        proc.on('SIGTERM', onSignal);
      }
      return interrupted;
    },
    dispose() {
      proc.removeListener('SIGINT', onSignal);
      proc.removeListener('SIGTERM', onSignal);
    },
  };
}
