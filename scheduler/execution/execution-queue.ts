/**
 * Queued work of one platform: lowest priority number first (REAPI: lower = more urgent); among
 * equal priorities, round robin across invocations (RequestMetadata.tool_invocation_id) so one large
 * build cannot starve a small one; first in, first out within an invocation.
 */
class PlatformQueue<T> {
  /** priority -> invocation id -> FIFO; the Map's insertion order is the round-robin ring. */
  private readonly levels = new Map<number, Map<string, T[]>>();
  size = 0;

  add(item: T, priority: number, invocation: string): void {
    let level = this.levels.get(priority);
    if (!level) this.levels.set(priority, (level = new Map()));
    const fifo = level.get(invocation);
    if (fifo) fifo.push(item);
    else level.set(invocation, [item]);
    this.size++;
  }

  private bestPriority(): number | undefined {
    let best: number | undefined;
    for (const p of this.levels.keys()) if (best === undefined || p < best) best = p;
    return best;
  }

  /** Any queued item (they all share the platform). */
  any(): T | undefined {
    for (const level of this.levels.values()) for (const fifo of level.values()) return fifo[0];
    return undefined;
  }

  peekPriority(): number | undefined {
    return this.bestPriority();
  }

  take(): T | undefined {
    const priority = this.bestPriority();
    if (priority === undefined) return undefined;
    const level = this.levels.get(priority)!;
    const [invocation, fifo] = level.entries().next().value as [string, T[]];
    const item = fifo.shift()!;
    // Rotate: this invocation goes to the back of the ring.
    level.delete(invocation);
    if (fifo.length > 0) level.set(invocation, fifo);
    if (level.size === 0) this.levels.delete(priority);
    this.size--;
    return item;
  }

  remove(item: T): boolean {
    for (const [priority, level] of this.levels) {
      for (const [invocation, fifo] of level) {
        const i = fifo.indexOf(item);
        if (i < 0) continue;
        fifo.splice(i, 1);
        if (fifo.length === 0) level.delete(invocation);
        if (level.size === 0) this.levels.delete(priority);
        this.size--;
        return true;
      }
    }
    return false;
  }

  *items(): Iterable<T> {
    for (const level of this.levels.values()) for (const fifo of level.values()) yield* fifo;
  }
}

/** One PlatformQueue per distinct platform (its queue key). */
export class ExecutionQueue<T> {
  private readonly queues = new Map<string, PlatformQueue<T>>();
  private readonly sequence = new Map<string, number>();
  private counter = 0;

  add(platformKey: string, item: T, priority: number, invocation: string): void {
    let queue = this.queues.get(platformKey);
    if (!queue) this.queues.set(platformKey, (queue = new PlatformQueue()));
    queue.add(item, priority, invocation);
    if (!this.sequence.has(platformKey)) this.sequence.set(platformKey, this.counter++);
  }

  remove(platformKey: string, item: T): boolean {
    const queue = this.queues.get(platformKey);
    if (!queue?.remove(item)) return false;
    if (queue.size === 0) this.dropQueue(platformKey);
    return true;
  }

  /**
   * The next item for an executor that can run the platforms `canRun` accepts: the most urgent
   * priority across those platforms; ties go to the platform that has waited longest for a turn.
   */
  take(canRun: (platformKey: string, sample: T) => boolean): T | undefined {
    let bestKey: string | undefined;
    let bestPriority = Infinity;
    let bestSeq = Infinity;
    for (const [key, queue] of this.queues) {
      const priority = queue.peekPriority()!;
      const seq = this.sequence.get(key)!;
      if ((priority < bestPriority || (priority === bestPriority && seq < bestSeq)) && canRun(key, queue.any()!)) {
        bestKey = key;
        bestPriority = priority;
        bestSeq = seq;
      }
    }
    if (bestKey === undefined) return undefined;
    const queue = this.queues.get(bestKey)!;
    const item = queue.take();
    if (queue.size === 0) this.dropQueue(bestKey);
    else this.sequence.set(bestKey, this.counter++);
    return item;
  }

  /** Items queued for one platform. */
  lengthOf(platformKey: string): number {
    return this.queues.get(platformKey)?.size ?? 0;
  }

  get size(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.size;
    return n;
  }

  *items(): Iterable<T> {
    for (const q of this.queues.values()) yield* q.items();
  }

  private dropQueue(key: string): void {
    this.queues.delete(key);
    this.sequence.delete(key);
  }
}
