import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildEventStream, delimitedMessages, delimitedRecord } from '../../src/core/index.js';
import type { ServerLog } from '../service-context.js';
import type { InvocationJournal } from './build-event-store.js';
import { Invocation } from './invocation.js';

/** What `invocation.json` holds beside an invocation's events. */
interface InvocationFile {
  readonly invocationId: string;
  readonly buildId: string;
  readonly instance: string;
  readonly createdMs: number;
  readonly streamFinished: boolean;
  readonly attemptResult?: string;
}

/**
 * Invocations kept on disk (`buildEvents.path`), one folder each, named by the invocation id:
 *
 * - `events.bep`: its BEP events, varint-delimited, exactly as `--build_event_binary_file` writes them
 *   (so Bazel's tools read it); appended event by event, in order, before the event is acknowledged;
 * - `invocation.json`: its ids and instance and whether its stream finished, replaced whole (temp
 *   file and rename) when that changes.
 *
 * Read back at start-up (oldest first), where an invocation whose stream had not finished is
 * `partial`: its stream cannot go on where it stopped. A record cut short by a crash ends the events.
 * Appends are synchronous: they are small, they must stay in order, and each invocation is bounded.
 */
export class BuildEventFiles implements InvocationJournal {
  private constructor(
    private readonly dir: string,
    private readonly log: ServerLog,
  ) {}

  /** Opens (creating) `dir` and reads back the invocations in it, oldest first. */
  static open(dir: string, log: ServerLog): { files: BuildEventFiles; invocations: Invocation[] } {
    mkdirSync(dir, { recursive: true });
    const files = new BuildEventFiles(dir, log);
    const invocations: Invocation[] = [];
    for (const name of readdirSync(dir)) {
      try {
        const invocation = files.read(name);
        if (invocation) invocations.push(invocation);
      } catch (e) {
        log.warn(`build events: ${join(dir, name)} is not readable, left out: ${(e as Error).message}`);
      }
    }
    invocations.sort((a, b) => a.createdMs - b.createdMs);
    return { files, invocations };
  }

  created(invocation: Invocation): void {
    mkdirSync(join(this.dir, invocation.id), { recursive: true });
    writeFileSync(join(this.dir, invocation.id, 'events.bep'), '');
    this.statusChanged(invocation);
  }

  appended(invocation: Invocation, bytes: Buffer): void {
    appendFileSync(join(this.dir, invocation.id, 'events.bep'), delimitedRecord(bytes));
  }

  statusChanged(invocation: Invocation): void {
    const file: InvocationFile = {
      invocationId: invocation.id,
      buildId: invocation.buildId,
      instance: invocation.instance,
      createdMs: invocation.createdMs,
      streamFinished: invocation.streamFinished,
      ...(invocation.attemptResult === undefined ? {} : { attemptResult: invocation.attemptResult }),
    };
    const path = join(this.dir, invocation.id, 'invocation.json');
    writeFileSync(`${path}.tmp`, `${JSON.stringify(file)}\n`);
    renameSync(`${path}.tmp`, path);
  }

  removed(invocationId: string): void {
    try {
      rmSync(join(this.dir, invocationId), { recursive: true, force: true });
    } catch (e) {
      this.log.warn(`build events: could not remove ${join(this.dir, invocationId)}: ${(e as Error).message}`);
    }
  }

  private read(name: string): Invocation | undefined {
    const folder = join(this.dir, name);
    let text: string;
    try {
      text = readFileSync(join(folder, 'invocation.json'), 'utf8');
    } catch {
      return undefined;
    }
    const file = JSON.parse(text) as InvocationFile;
    if (file.invocationId !== name) throw new Error(`invocation.json names ${JSON.stringify(file.invocationId)}`);
    const invocation = new Invocation(file.invocationId, file.buildId, file.instance, file.createdMs);
    for (const bytes of delimitedMessages(readFileSync(join(folder, 'events.bep')))) invocation.add(bytes, buildEventStream.BuildEvent.decode(bytes));
    invocation.nextSequence = invocation.events.length + 1;
    if (file.attemptResult !== undefined) invocation.attemptResult = file.attemptResult;
    invocation.streamOpened();
    invocation.streamClosed(file.streamFinished);
    return invocation;
  }
}
