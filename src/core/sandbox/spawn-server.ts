import { fork, spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ProcessResult } from './process-runner.js';
import { spawnProcessGroup, type ProcessGroupSpec } from './spawn-process-group.js';

/** Starts a process group and waits for it: `spawnProcessGroup` itself, or a spawn server's `run`. */
export type ProcessGroupSpawner = (spec: ProcessGroupSpec) => Promise<ProcessResult>;

type Answer = { readonly done: number; readonly result: ProcessResult } | { readonly done: number; readonly error: string } | { readonly ready: true };

export interface SpawnServerOptions {
  /** The compiled server script; by default the one beside this module (see compiledServerScript). */
  readonly script?: string;
  /**
   * A command prefix the server runs under, e.g. bubblewrap putting it in a network namespace of
   * its own (isolatedNetworkWrapper); it must pass the IPC descriptor and environment through.
   */
  readonly wrapper?: readonly string[];
}

/**
 * Starts processes from a small helper process instead of Kiln's own. Node forks the whole parent
 * to start a child: in a build whose heap holds a thousand packages that costs about twice as much
 * CPU, on the main thread, as in a fresh Node process, and it is paid once per action. The server
 * (`spawn-server-main.ts`) stays small, runs on another core, and does exactly what
 * `spawnProcessGroup` does in-process; results come back over the IPC channel (Buffers intact).
 *
 * Started on the first `run`; keeps Kiln alive only while a run is pending; `close()` ends it.
 * When the compiled server script is absent (sources run under a test runner before a build),
 * `run` spawns in-process, with the same behaviour.
 */
export class SpawnServer {
  private child: ChildProcess | undefined;
  private readyState: Promise<boolean> | undefined;
  private readonly pending = new Map<number, { resolve(r: ProcessResult): void; reject(e: Error): void }>();
  private nextId = 0;
  private readonly script: string | undefined;
  private readonly wrapper: readonly string[];

  constructor(options: SpawnServerOptions = {}) {
    this.script = options.script ?? compiledServerScript();
    this.wrapper = options.wrapper ?? [];
  }

  /**
   * Starts the server if needed; true once it answers, false if it could not start (a wrapper that
   * fails here, say). Callers that depend on the wrapper ask this before the first run.
   */
  async started(): Promise<boolean> {
    if (this.script === undefined) return false;
    const child = this.start(this.script);
    // Waiting for the answer must keep Kiln alive, like a pending run does.
    this.ref(child);
    try {
      return await this.readyState!;
    } finally {
      // A server closed meanwhile stays referenced: close() is waiting for its exit.
      if (this.pending.size === 0 && this.child === child) this.unref(child);
    }
  }

  /** Whether processes really start from the helper process (else in-process). */
  get outOfProcess(): boolean {
    return this.script !== undefined;
  }

  readonly run: ProcessGroupSpawner = (spec) => {
    if (this.script === undefined) return spawnProcessGroup(spec);
    const child = this.start(this.script);
    const id = this.nextId++;
    const { signal, ...plain } = spec;
    return new Promise<ProcessResult>((resolve, reject) => {
      // A server that has gone has killed its processes already (it kills them on disconnect).
      const onAbort = () => {
        if (child.connected) child.send({ kill: id });
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        resolve: (r) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(r);
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
      if (this.pending.size === 1) this.ref(child);
      child.send({ run: id, spec: plain });
      if (signal?.aborted) onAbort();
    });
  };

  /**
   * Ends the helper process; runs still pending fail. Resolves once it has exited, so that it never
   * outlives Kiln and its CPU time (and its processes') is counted as Kiln's, as `time` reports it.
   */
  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child?.connected) child.disconnect();
    this.failPending(new Error('the spawn server was closed'));
    if (child && child.exitCode === null && child.signalCode === null) {
      child.ref(); // waiting for its exit must keep Kiln alive
      await once(child, 'exit');
    }
  }

  private start(script: string): ChildProcess {
    if (this.child) return this.child;
    // 'advanced' serialization carries Buffers (captured stdout/stderr) without re-encoding them.
    // Detached: the terminal's Ctrl-C goes to Kiln's process group, and Kiln decides what to stop and
    // sends `kill`; the server (and a wrapper such as bwrap) must outlive the signal to report back.
    // It still ends with Kiln: it exits when the IPC channel closes, and bwrap has --die-with-parent.
    const options = { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] as StdioOptions, serialization: 'advanced' as const, detached: true };
    const child =
      this.wrapper.length === 0
        ? fork(script, [], { ...options, execArgv: [] })
        : spawn(this.wrapper[0]!, [...this.wrapper.slice(1), process.execPath, script], options);
    let announceReady: (ok: boolean) => void = () => {};
    this.readyState = new Promise<boolean>((resolve) => (announceReady = resolve));
    child.on('exit', () => announceReady(false));
    child.on('error', () => announceReady(false));
    child.on('message', (answer: Answer) => {
      if ('ready' in answer) return announceReady(true);
      const waiter = this.pending.get(answer.done);
      if (!waiter) return;
      this.pending.delete(answer.done);
      if (this.pending.size === 0) this.unref(child);
      if ('error' in answer) waiter.reject(new Error(answer.error));
      else waiter.resolve(answer.result);
    });
    // Only the current server's death fails the pending runs: a closed one's exit comes later.
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      this.failPending(new Error(`the spawn server exited unexpectedly (${signal ?? `exit ${code}`})`));
    });
    child.on('error', (e) => {
      if (this.child === child) this.failPending(e);
    });
    this.child = child;
    this.unref(child);
    return child;
  }

  private failPending(error: Error): void {
    const waiters = [...this.pending.values()];
    this.pending.clear();
    for (const w of waiters) w.reject(error);
  }

  /** The IPC channel and the child keep the event loop alive only while a run is pending. */
  private ref(child: ChildProcess): void {
    child.ref();
    (child.channel as { ref?(): void } | undefined)?.ref?.();
  }

  private unref(child: ChildProcess): void {
    child.unref();
    (child.channel as { unref?(): void } | undefined)?.unref?.();
  }
}

/**
 * The server's compiled entry beside this module: in dist/bundle/ (the CLI bundle names its entry
 * `spawn-server-main.js`) or dist/src/core/sandbox/ (tsc). Under a test runner this module is a .ts
 * source; the build's tsc output is used then, when present.
 */
function compiledServerScript(): string | undefined {
  const here = import.meta.url;
  const candidates = here.endsWith('.ts') ? [new URL('../../../dist/src/core/sandbox/spawn-server-main.js', here)] : [new URL('./spawn-server-main.js', here)];
  return candidates.map((u) => fileURLToPath(u)).find((p) => existsSync(p));
}
