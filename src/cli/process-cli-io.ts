import { writeSync } from 'node:fs';
import { ExitCode } from '../core/index.js';
import type { CliIO } from './io.js';
import { InterruptedBySigint, runBreakingOnSigint } from './sigint-breakable.js';
import type { SigtermMode, SigtermRelay } from './sigterm-relay.js';

/** How long Kiln may take to stop cleanly after Ctrl-C or SIGTERM before it exits anyway. */
export const INTERRUPT_GRACE_MS = 1500;

/**
 * The grace period of the servers (`cluster up`, `executor`, `scheduler`): stopping kills the
 * actions they run and removes their containers and build directories, which the engine may take
 * seconds to do on a loaded machine; leaving them behind is what stopping cleanly must avoid.
 */
export const SERVER_INTERRUPT_GRACE_MS = 30_000;

/** process.stdout or process.stderr: a writer, and its file descriptor (tests' fakes have none). */
type ProcessStream = CliIO['stderr'] & { readonly fd?: number; readonly isTTY?: boolean };

/**
 * Writes straight to a file descriptor. An interrupt that stops a phase (sigint-breakable.ts) can
 * cut Node's stream in the middle of a write, leaving it believing a write is still under way, so
 * that it queues every later one forever: Bazel's closing words would never appear.
 */
function fdWriter(fd: number): CliIO['stderr'] {
  return {
    write(chunk) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      for (let done = 0; done < bytes.length; ) {
        try {
          done += writeSync(fd, bytes, done);
        } catch (e) {
          // A non-blocking pipe that is full: wait for the reader. Any other failure: the reader is gone.
          if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') return false;
        }
      }
      return true;
    },
  };
}

/** The parts of Node's `process` the binary's IO uses (tests pass a fake). */
export interface InterruptibleProcess {
  readonly stdout: ProcessStream;
  readonly stderr: ProcessStream;
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
 *
 * `runInterruptibly` covers the phases that never yield: SIGINT stops them through a watchdog
 * thread (sigint-breakable.ts) and the command exits 8, as Bazel. Node has no such watchdog for
 * SIGTERM, and a listener would never run, so while such a phase runs Kiln does not listen to
 * SIGTERM itself: the binary passes a `sigterm` relay (sigterm-relay.ts), whose thread turns
 * SIGTERM into SIGINT for the watchdog, so that SIGTERM too ends the phase with exit 8, as Bazel's
 * client treats it. Without a relay (or before its thread is ready) SIGTERM's default action ends
 * Kiln at once (status 143 in a shell); nothing of the output base is held then (the lock is
 * taken for execution, after analysis).
 */
export function processCliIO(
  proc: InterruptibleProcess,
  sigterm?: SigtermRelay,
): CliIO & { setInterruptGrace(ms: number): void; runInterruptibly<T>(work: () => T): T; dispose(): void } {
  let listening = false;
  let breaking = 0;
  let graceMs = INTERRUPT_GRACE_MS;
  let interruptedAt: NodeJS.Signals | undefined;
  let announce = () => {};
  const interrupted = new Promise<void>((resolve) => (announce = resolve));
  const writers = { stdout: proc.stdout as CliIO['stdout'], stderr: proc.stderr as CliIO['stderr'] };
  const onSignal = (signal: NodeJS.Signals) => {
    if (interruptedAt !== undefined) {
      writers.stderr.write(`ERROR: ${signal} again: exiting now.\n`);
      proc.exit(ExitCode.INTERRUPTED);
    }
    interruptedAt = signal;
    announce();
    const forced = setTimeout(() => {
      writers.stderr.write(`ERROR: Kiln did not stop within ${graceMs / 1000}s of ${signal}: exiting.\n`);
      proc.exit(ExitCode.INTERRUPTED);
    }, graceMs);
    // The grace period must not itself keep a command alive that has finished.
    forced.unref();
  };
  return {
    stdout: { write: (chunk) => writers.stdout.write(chunk) },
    stderr: { write: (chunk) => writers.stderr.write(chunk) },
    stderrIsTTY: proc.stderr.isTTY === true,
    cwd: proc.cwd(),
    env: proc.env,
    setInterruptGrace(ms: number) {
      graceMs = ms;
    },
    runInterruptibly<T>(work: () => T): T {
      const restoreTerm = listening;
      if (restoreTerm) proc.removeListener('SIGTERM', onSignal);
      // A phase may run inside another: SIGTERM keeps stopping the outer one after the inner ends.
      const modeAfter: SigtermMode = breaking > 0 ? 'break' : listening ? 'listener' : 'default';
      breaking++;
      sigterm?.setMode('break');
      try {
        return runBreakingOnSigint(work);
      } catch (e) {
        if (e instanceof InterruptedBySigint) {
          if (proc.stdout.fd !== undefined) writers.stdout = fdWriter(proc.stdout.fd);
          if (proc.stderr.fd !== undefined) writers.stderr = fdWriter(proc.stderr.fd);
        }
        throw e;
      } finally {
        breaking--;
        sigterm?.setMode(modeAfter);
        if (restoreTerm) proc.on('SIGTERM', onSignal);
      }
    },
    get interrupted() {
      if (!listening) {
        listening = true;
        sigterm?.setMode('listener');
        proc.on('SIGINT', onSignal);
        proc.on('SIGTERM', onSignal);
      }
      return interrupted;
    },
    dispose() {
      sigterm?.setMode('default');
      proc.removeListener('SIGINT', onSignal);
      proc.removeListener('SIGTERM', onSignal);
    },
  };
}
