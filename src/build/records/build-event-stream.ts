import { buildEventStream } from '../../core/index.js';

type BuildEventInit = buildEventStream.BuildEventInit;
type BuildEventIdInit = buildEventStream.BuildEventIdInit;

/** Where a build event goes: a file (JSON, binary, text) or the Build Event Service. */
export interface BuildEventTransport {
  /** Called once per event, in stream order. */
  write(event: BuildEventInit): void;
  /** After the last event: flush and release; resolves when everything is out (or given up on). `exitCode`: the command's. */
  close(exitCode?: number): Promise<void>;
}

/**
 * Bazel's BuildEventStreamer: every event but `started` must have been announced as a child of an
 * earlier one, so a reader knows what is still to come. An event nobody announced is preceded by a
 * progress event that announces it (and the next progress event, which keeps the chain open); the
 * last event of the stream is a progress event with `last_message`.
 */
export class BuildEventStream {
  private readonly announced = new Map<string, BuildEventIdInit>();
  private readonly posted = new Set<string>();
  private progressCount = 0;
  private closed = false;

  constructor(private readonly transports: readonly BuildEventTransport[]) {}

  /** Posts `event` (with its `id` and `children`), announcing it through a progress event first when needed. */
  post(event: BuildEventInit): void {
    if (this.closed) return;
    const key = idKey(event.id!);
    if (this.posted.has(key)) return;
    if (this.posted.size > 0 && !this.announced.has(key)) this.emit(this.progress([event.id!]));
    this.emit(event);
  }

  /** Whether an event with this id was announced or posted (a child announced twice is announced once). */
  isAnnounced(id: BuildEventIdInit): boolean {
    return this.announced.has(idKey(id));
  }

  /** Ids announced and not yet posted, in the order they were announced. */
  pending(): BuildEventIdInit[] {
    return [...this.announced].filter(([key]) => !this.posted.has(key)).map(([, id]) => id);
  }

  /** The closing progress event with `last_message`, then every transport is closed. */
  async close(exitCode?: number): Promise<void> {
    if (!this.closed) {
      this.emit({ ...this.progress([], true), lastMessage: true });
      this.closed = true;
    }
    await Promise.all(this.transports.map((t) => t.close(exitCode)));
  }

  /** The next progress event: it announces the one after it, unless it is the last. */
  private progress(announce: readonly BuildEventIdInit[], last = false): BuildEventInit {
    const id: BuildEventIdInit = { progress: { opaqueCount: this.progressCount } };
    this.progressCount++;
    const children = last ? [] : [{ progress: { opaqueCount: this.progressCount } }, ...announce];
    return { id, children, progress: {} };
  }

  private emit(event: BuildEventInit): void {
    this.posted.add(idKey(event.id!));
    for (const child of event.children ?? []) this.announced.set(idKey(child), child);
    for (const transport of this.transports) transport.write(event);
  }
}

/** Ids are compared by value, as Bazel compares BuildEventId protos: by their (deterministic) encoding. */
export function idKey(id: BuildEventIdInit): string {
  return buildEventStream.BuildEventId.encode(id).toString('base64');
}
