import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { writeFileAtomicallySync } from './atomic-file-write.js';

/** A batch of files for the thread: their bytes side by side in one transferred buffer. */
export interface WriteBatch {
  readonly id: number;
  readonly files: readonly { readonly path: string; readonly mode: number; readonly offset: number; readonly length: number }[];
  readonly bytes: ArrayBuffer;
}

export interface WriteBatchAnswer {
  readonly id: number;
  readonly failures: readonly { readonly index: number; readonly code?: string; readonly message: string }[];
}

interface QueuedWrite {
  readonly path: string;
  readonly data: Uint8Array;
  readonly mode: number;
  resolve(): void;
  reject(e: Error): void;
}

/** A batch is sent at once when its bytes reach this; otherwise at the end of the event-loop turn. */
const BATCH_BYTES = 8 * 1024 * 1024;

/**
 * Writes small files atomically on a thread of its own. A fully cached build writes thousands of
 * outputs, and the kernel takes 30-350 us to create each file on our machines: on the main thread
 * that time delays every other action's cache lookup. The writes queued in one event-loop turn go
 * out as one batch, their bytes copied into one transferred buffer (a Buffer posted as it is would
 * be cloned with its whole backing store: a pool slab, or a whole BatchReadBlobs response). A turn's
 * lone write is done here when nothing is in flight: that is cheaper than the hand-off.
 *
 * Until the thread is online, and for good when it cannot start or dies, files are written on the
 * calling thread, so the first outputs of a build never wait for the thread to start.
 */
export class FileWriterThread {
  private worker: Worker | undefined;
  private state: 'idle' | 'starting' | 'online' | 'unavailable' = 'idle';
  private queue: QueuedWrite[] = [];
  private queuedBytes = 0;
  private flushScheduled = false;
  private readonly inFlight = new Map<number, readonly QueuedWrite[]>();
  private nextId = 0;
  private readonly readiness: Promise<'online' | 'unavailable'>;
  private announce!: (state: 'online' | 'unavailable') => void;

  /** `script`: the thread's compiled entry; null: no thread, every file written on the calling thread. */
  constructor(private readonly script: string | null = compiledWriterScript()) {
    this.readiness = new Promise((resolve) => (this.announce = resolve));
  }

  /** Starts the thread if it is not started; resolves when it is online or known not to be. */
  whenReady(): Promise<'online' | 'unavailable'> {
    if (this.state === 'idle') this.start();
    return this.readiness;
  }

  /** Writes `data` to `path` (temp file, mode, rename); resolves when the file is in place. */
  write(path: string, data: Uint8Array, mode: number): Promise<void> {
    if (this.state !== 'online') {
      if (this.state === 'idle') this.start();
      try {
        writeFileAtomicallySync(path, data, mode);
        return Promise.resolve();
      } catch (e) {
        return Promise.reject(e as Error);
      }
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ path, data, mode, resolve, reject });
      this.queuedBytes += data.length;
      if (this.queuedBytes >= BATCH_BYTES) this.flush();
      else if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Stops the thread (tests; a CLI process simply exits, the idle thread does not hold it). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.state = 'unavailable';
    this.announce('unavailable');
    if (worker) await worker.terminate();
  }

  private start(): void {
    if (this.script === null) {
      this.state = 'unavailable';
      this.announce('unavailable');
      return;
    }
    this.state = 'starting';
    void import('node:worker_threads')
      .then(({ Worker }) => {
        if (this.state !== 'starting') return;
        const worker = new Worker(this.script!);
        this.worker = worker;
        worker.on('online', () => {
          if (this.state !== 'starting') return;
          this.state = 'online';
          worker.unref(); // nothing is in flight yet, and an idle thread does not hold the process
          this.announce('online');
        });
        worker.on('message', (answer: WriteBatchAnswer) => this.settle(answer));
        worker.on('error', (e) => this.fail(e));
        worker.on('exit', (code) => this.fail(new Error(`the file writer thread exited with code ${code}`)));
        // Referenced until online (a start-up in progress finishes; whoever awaits whenReady gets an
        // answer), then unreferenced once: unref() before the 'message' listener would be undone by it,
        // and an online thread that was never sent a batch held the process open for good.
      })
      .catch((e: Error) => this.fail(e));
  }

  private flush(): void {
    this.flushScheduled = false;
    const writes = this.queue;
    if (writes.length === 0) return;
    this.queue = [];
    const total = this.queuedBytes;
    this.queuedBytes = 0;
    const worker = this.worker;
    // The thread died since these were queued. Or a lone file with nothing in flight (most turns of a
    // cold build): handing it over cost ~0.13 ms of CPU more than writing it here (a cross-thread
    // wake-up; bench/remote/lone-writes.mjs), and no earlier write can land after it.
    if (this.state !== 'online' || !worker || (writes.length === 1 && this.inFlight.size === 0)) {
      for (const w of writes) this.writeHere(w);
      return;
    }
    const bytes = new Uint8Array(total);
    let offset = 0;
    const files = writes.map((w) => {
      bytes.set(w.data, offset);
      const file = { path: w.path, mode: w.mode, offset, length: w.data.length };
      offset += w.data.length;
      return file;
    });
    const id = this.nextId++;
    if (this.inFlight.size === 0) worker.ref(); // a pending write keeps the process alive
    this.inFlight.set(id, writes);
    worker.postMessage({ id, files, bytes: bytes.buffer } satisfies WriteBatch, [bytes.buffer]);
  }

  private settle(answer: WriteBatchAnswer): void {
    const writes = this.inFlight.get(answer.id);
    if (!writes) return;
    this.inFlight.delete(answer.id);
    if (this.inFlight.size === 0) this.worker?.unref();
    const failed = new Map(answer.failures.map((f) => [f.index, f]));
    writes.forEach((w, index) => {
      const failure = failed.get(index);
      if (!failure) return w.resolve();
      const error: NodeJS.ErrnoException = new Error(failure.message);
      if (failure.code !== undefined) error.code = failure.code;
      w.reject(error);
    });
  }

  /** The thread is gone: what it had not answered is written here, and so is everything after. */
  private fail(cause: Error): void {
    if (this.state === 'unavailable') return;
    this.state = 'unavailable';
    this.announce('unavailable');
    this.worker = undefined;
    const pending = [...this.inFlight.values()].flat();
    this.inFlight.clear();
    for (const w of pending) this.writeHere(w, cause);
  }

  private writeHere(w: QueuedWrite, threadFailure?: Error): void {
    try {
      writeFileAtomicallySync(w.path, w.data, w.mode);
      w.resolve();
    } catch (e) {
      w.reject(
        threadFailure ? new Error(`${(e as Error).message} (after the file writer thread failed: ${threadFailure.message})`, { cause: e }) : (e as Error),
      );
    }
  }
}

/**
 * The thread's compiled entry beside this module: in dist/bundle/ (the CLI bundle names its entry
 * `file-writer-main.js`) or dist/src/remote/ (tsc). Under a test runner this module is a .ts source;
 * the build's tsc output is used then, when present.
 */
function compiledWriterScript(): string | null {
  const here = import.meta.url;
  const candidate = here.endsWith('.ts') ? new URL('../../dist/src/remote/file-writer-main.js', here) : new URL('./file-writer-main.js', here);
  const path = fileURLToPath(candidate);
  return existsSync(path) ? path : null;
}

let shared: FileWriterThread | undefined;

/** The process's file writer thread, made on first use. */
export function fileWriterThread(): FileWriterThread {
  shared ??= new FileWriterThread();
  return shared;
}
