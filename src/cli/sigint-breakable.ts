import { createContext, Script, type Context } from 'node:vm';

/** What runBreakingOnSigint throws when SIGINT stopped the work. */
export class InterruptedBySigint extends Error {
  constructor() {
    super('interrupted');
  }
}

const RUN_WORK = new Script('work()', { filename: 'kiln:sigint-breakable' });
let context: (Context & { work?: (() => unknown) | undefined }) | undefined;

/**
 * Runs synchronous work (loading, analysis, a query: Starlark code, which may loop forever) so that
 * SIGINT stops it wherever it is. A JS signal listener cannot: it runs only when the main thread is
 * idle. Node's `breakOnSigint` takes SIGINT on a watchdog thread while the script runs and calls
 * V8's TerminateExecution, which unwinds every JS frame (skipping their catch and finally blocks)
 * up to here; the watchdog's handler replaces the process's own SIGINT handler meanwhile, so no
 * listener sees that signal too. It costs nothing per step (V8 checks for termination where it
 * checks its stack limit: every loop back edge and call) and one thread start per call (about
 * 0.5 ms), so callers wrap a whole phase, never each Starlark call.
 */
export function runBreakingOnSigint<T>(work: () => T): T {
  context ??= createContext({});
  const previous = context.work;
  context.work = work;
  try {
    return RUN_WORK.runInContext(context, { breakOnSigint: true }) as T;
  } catch (e) {
    // The error comes from the context's realm: not `instanceof Error` here, so test its code.
    if ((e as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED') throw new InterruptedBySigint();
    throw e;
  } finally {
    context.work = previous;
  }
}
