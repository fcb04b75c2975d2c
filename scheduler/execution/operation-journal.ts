import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { digestKey, parseDigestKey, reapi, type Clock, type Digest } from '../../src/core/index.js';
import type { OperationState, SchedulerObserver, SubmitRequest } from './execution-scheduler.js';

/** An operation as the journal last knew it. */
export interface JournaledOperation {
  readonly name: string;
  readonly instanceName: string;
  readonly actionDigest: Digest;
  readonly invocationId: string;
  /** Unfinished: how it was submitted. */
  readonly priority: number;
  readonly skipCacheLookup: boolean;
  readonly doNotCache: boolean;
  /** The last task handed out for it, if any. */
  readonly task?: { readonly taskId: string; readonly executorId: string };
  /** Finished: its response and when. */
  readonly finished?: { readonly response: reapi.ExecuteResponse; readonly at: number };
}

/** One line of the journal. */
type Entry =
  | { e: 'queued'; op: string; instance: string; action: string; invocation: string; priority: number; skipCacheLookup: boolean; doNotCache: boolean }
  | { e: 'task'; op: string; task: string; executor: string }
  | { e: 'done'; op: string; instance: string; action: string; invocation: string; at: number; response: string }
  | { e: 'forget'; op: string };

/**
 * The scheduler's operations on disk, so that a restarted scheduler knows them: an append-only file
 * of JSON lines (an operation queued, handed to a task, finished, forgotten), written as the
 * `SchedulerObserver` hears of them, before any client is answered. Opening reads it back (a line
 * cut short by a crash is ignored), drops what is finished beyond the retention, and rewrites it
 * compacted (temp file and rename). Writes are synchronous appends of one line each (no fsync: the
 * page cache survives the process; a machine crash loses at most the operations of its last moments,
 * which clients then execute again after NOT_FOUND).
 */
export class OperationJournal {
  private constructor(
    private fd: number | undefined,
    private readonly path: string,
    private readonly clock: Clock,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * Opens (or creates) the journal at `path`; returns it and the operations a previous scheduler left.
   * `warn` hears once if writing fails later (the scheduler goes on without a journal).
   */
  static open(
    path: string,
    clock: Clock,
    retentionMs: number,
    warn: (message: string) => void,
  ): { journal: OperationJournal; operations: JournaledOperation[] } {
    mkdirSync(dirname(path), { recursive: true });
    const now = clock.now();
    const operations = [...readJournal(path).values()].filter((op) => !op.finished || now - op.finished.at < retentionMs);
    const temp = `${path}.tmp-${process.pid}`;
    const fd = openSync(temp, 'w', 0o600);
    for (const op of operations) for (const entry of entriesOf(op)) writeSync(fd, `${JSON.stringify(entry)}\n`);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temp, path);
    return { journal: new OperationJournal(openSync(path, 'a', 0o600), path, clock, warn), operations };
  }

  /** The hooks that keep it current. */
  observer(): SchedulerObserver {
    return {
      operationQueued: (op, request) => this.append(queuedEntry(op, request)),
      taskAssigned: (ops, executor, taskId) => {
        for (const op of ops) this.append({ e: 'task', op: op.name, task: taskId, executor: executor.id });
      },
      operationFinished: (response, op) => this.append(doneEntry(op, response, this.clock.now())),
      operationForgotten: (name) => this.append({ e: 'forget', op: name }),
    };
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  private append(entry: Entry): void {
    if (this.fd === undefined) return;
    try {
      writeSync(this.fd, `${JSON.stringify(entry)}\n`);
    } catch (e) {
      // A full disk must not stop the scheduler: operations stay in memory, a restart loses them.
      this.close();
      this.warn(`operation journal ${this.path}: ${(e as Error).message}; operations are no longer journaled`);
    }
  }
}

/** What names an operation in the journal. */
type OperationIdentity = Pick<OperationState, 'name' | 'instanceName' | 'actionDigest' | 'invocationId'>;

function queuedEntry(op: OperationIdentity, request: Pick<SubmitRequest, 'priority' | 'skipCacheLookup' | 'doNotCache'>): Entry {
  return {
    e: 'queued',
    op: op.name,
    instance: op.instanceName,
    action: digestKey(op.actionDigest),
    invocation: op.invocationId,
    priority: request.priority,
    skipCacheLookup: request.skipCacheLookup === true,
    doNotCache: request.doNotCache,
  };
}

function doneEntry(op: OperationIdentity, response: reapi.ExecuteResponseInit, at: number): Entry {
  return {
    e: 'done',
    op: op.name,
    instance: op.instanceName,
    action: digestKey(op.actionDigest),
    invocation: op.invocationId,
    at,
    response: Buffer.from(reapi.ExecuteResponse.encode(response)).toString('base64'),
  };
}

/** The lines that recreate `op` in a compacted journal. */
function entriesOf(op: JournaledOperation): Entry[] {
  if (op.finished) return [doneEntry(op, op.finished.response, op.finished.at)];
  const queued = queuedEntry(op, op);
  return op.task ? [queued, { e: 'task', op: op.name, task: op.task.taskId, executor: op.task.executorId }] : [queued];
}

/** Folds the journal's lines into the last state of each operation; a missing file is an empty journal. */
function readJournal(path: string): Map<string, JournaledOperation> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw e;
  }
  const out = new Map<string, JournaledOperation>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let entry: Entry;
    try {
      entry = JSON.parse(line) as Entry;
    } catch {
      continue; // cut short by a crash
    }
    const known = out.get(entry.op);
    switch (entry.e) {
      case 'queued':
        out.set(entry.op, {
          name: entry.op,
          instanceName: entry.instance,
          actionDigest: parseDigestKey(entry.action),
          invocationId: entry.invocation,
          priority: entry.priority,
          skipCacheLookup: entry.skipCacheLookup,
          doNotCache: entry.doNotCache,
        });
        break;
      case 'task':
        if (known && !known.finished) out.set(entry.op, { ...known, task: { taskId: entry.task, executorId: entry.executor } });
        break;
      case 'done':
        out.set(entry.op, {
          name: entry.op,
          instanceName: entry.instance,
          actionDigest: parseDigestKey(entry.action),
          invocationId: entry.invocation,
          priority: 0,
          skipCacheLookup: false,
          doNotCache: false,
          finished: { response: reapi.ExecuteResponse.decode(Buffer.from(entry.response, 'base64')), at: entry.at },
        });
        break;
      case 'forget':
        out.delete(entry.op);
        break;
    }
  }
  return out;
}
