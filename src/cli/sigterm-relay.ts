import { constants } from 'node:os';
import { Worker } from 'node:worker_threads';

/** What a SIGTERM does, as the main thread sets it (see `startSigtermRelay`). */
export type SigtermMode =
  /** Nobody listens: SIGTERM ends Kiln by its default action. */
  | 'default'
  /** The main thread's own listener handles it (an idle event loop runs it). */
  | 'listener'
  /** A phase that never yields runs (sigint-breakable.ts): SIGTERM stops it as SIGINT does. */
  | 'break';

export interface SigtermRelay {
  setMode(mode: SigtermMode): void;
  /** Resolves once the thread takes SIGTERM; never, where it cannot (see RELAY_THREAD). */
  readonly ready: Promise<void>;
}

const MODES: Record<SigtermMode, number> = { default: 0, listener: 1, break: 2 };
/** The shared state: the mode the main thread sets, and whether the thread takes SIGTERM yet. */
const MODE = 0;
const READY = 1;
const NOT_YET = 0;
const TAKING = 1;
const UNAVAILABLE = 2;
/**
 * How long a phase waits, at most, for the thread to take SIGTERM before it starts. The thread is
 * ready long before on an idle machine (it starts while Kiln loads its modules); on a loaded one
 * it may not be, and a SIGTERM then would end Kiln by its default action.
 */
const READY_WAIT_MS = 3000;

/**
 * The relay's thread. Node delivers no signal to a worker's `process.on`, so it takes SIGTERM with
 * the libuv signal handle that `process.on` itself is built on; where that handle cannot be had
 * (a Node without `process.binding`, the permission model), the thread ends and SIGTERM keeps its
 * default action, which is what Kiln did before. Re-raising the signal after closing the handle
 * restores the default action: libuv puts SIG_DFL back when the last handle of a signal stops.
 */
const RELAY_THREAD = `
'use strict';
const { workerData, parentPort } = require('node:worker_threads');
const state = new Int32Array(workerData.state);
const say = (readiness) => { Atomics.store(state, ${READY}, readiness); Atomics.notify(state, ${READY}); };
(() => {
  process.noDeprecation = true;
  let Signal;
  try { ({ Signal } = process.binding('signal_wrap')); } catch { return say(${UNAVAILABLE}); }
  const handle = new Signal();
  handle.onsignal = () => {
    const now = Atomics.load(state, ${MODE});
    if (now === ${MODES.break}) process.kill(process.pid, 'SIGINT');
    else if (now === ${MODES.default}) { handle.close(); process.kill(process.pid, 'SIGTERM'); }
  };
  if (handle.start(${constants.signals.SIGTERM}) !== 0) { handle.close(); return say(${UNAVAILABLE}); }
  say(${TAKING});
  parentPort.postMessage('ready');
})();
`;

/**
 * Lets SIGTERM stop loading, analysis and query evaluation the way SIGINT does (Bazel's client
 * treats both as a cancel: exit 8). While such a phase runs, the main thread runs no listener, and
 * Node's watchdog that breaks a running script (`breakOnSigint`) takes SIGINT only; this thread
 * takes SIGTERM instead and raises SIGINT at the process, which the watchdog turns into a stop.
 * The thread starts when Kiln starts, so that it is ready by the time evaluation begins (its start
 * runs beside the main thread's loading of modules); a phase that would start before that waits for
 * it (READY_WAIT_MS at most), and a SIGTERM before any phase keeps its default action. The thread
 * never keeps Kiln alive.
 */
export function startSigtermRelay(): SigtermRelay {
  const state = new Int32Array(new SharedArrayBuffer(8));
  const worker = new Worker(RELAY_THREAD, {
    eval: true,
    workerData: { state: state.buffer },
    // Not the main thread's flags: `--input-type=module` would make this CommonJS source a module.
    execArgv: [],
    stdout: true,
    stderr: true,
  });
  worker.unref();
  // A relay that fails leaves SIGTERM as it was: never a reason for a command to fail.
  worker.on('error', () => {
    Atomics.store(state, READY, UNAVAILABLE);
    Atomics.notify(state, READY);
  });
  const ready = new Promise<void>((resolve) => worker.once('message', () => resolve()));
  return {
    ready,
    setMode(next) {
      Atomics.store(state, MODE, MODES[next]);
      // A phase that never yields is about to start: the thread must take SIGTERM by then.
      if (next === 'break' && Atomics.load(state, READY) === NOT_YET) Atomics.wait(state, READY, NOT_YET, READY_WAIT_MS);
    },
  };
}
