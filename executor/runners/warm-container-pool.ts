import { mkdirSync, rmSync } from 'node:fs';
import type Docker from 'dockerode';
import { type ContainerSnapshot, containerUnchanged, snapshotContainer } from './container-state.js';

/** A started container waiting for actions: `sleep infinity` as its init, its mount directory bound at CONTAINER_MOUNT. */
export interface WarmContainer {
  readonly key: string;
  readonly container: Docker.Container;
  /** Host pid of the container's init. */
  readonly initPid: number;
  /** The container's cgroup.procs on the host: every process of the container. */
  readonly processesFile: string;
  /** The container's memory cgroup file counting OOM kills. */
  readonly oomFile: string | undefined;
  /** Host directory bind-mounted at CONTAINER_MOUNT; an action's build directory is moved into it for the run. */
  readonly mountDirectory: string;
  /** Actions run in it so far. */
  actions: number;
}

export interface WarmContainerPoolOptions {
  /** Started containers kept waiting, over every key; the oldest goes first. */
  readonly maxIdle: number;
  /** A container is recycled after this many actions even when it looks unchanged. */
  readonly maxActionsPerContainer: number;
  /** Kills and removes a container (any state). */
  readonly remove: (container: Docker.Container) => Promise<void>;
}

/**
 * Started containers by key (image, user and limits: what a container is created with), each used by
 * one action at a time. A container goes back to the pool only when the host sees it exactly as
 * before the action: its init alone in its cgroup, and no entry made, removed or changed in any
 * directory the action could write outside its build directory (see container-state.ts). Otherwise,
 * and after maxActionsPerContainer actions, it is killed and removed: "recycle after any doubt".
 */
export class WarmContainerPool {
  private readonly idle: WarmContainer[] = [];
  /** Removals under way, awaited by close(). */
  private readonly removals = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly options: WarmContainerPoolOptions) {}

  /** An idle container of `key`, or undefined (the caller starts one). */
  take(key: string): WarmContainer | undefined {
    const i = this.idle.findIndex((c) => c.key === key);
    return i < 0 ? undefined : this.idle.splice(i, 1)[0];
  }

  /** Snapshot of a container before an action runs in it: undefined when the host cannot vouch for it (it is then recycled after the action). */
  snapshot(warm: WarmContainer): ContainerSnapshot | undefined {
    return snapshotContainer(warm.initPid, warm.mountDirectory);
  }

  /** Whether the action left the container as `before` (it may then be given back). */
  unchanged(warm: WarmContainer, before: ContainerSnapshot | undefined): boolean {
    return before !== undefined && containerUnchanged(before, warm.initPid, warm.mountDirectory, warm.processesFile);
  }

  /** Back to the pool when `reusable` and under its limits, else removed in the background. */
  giveBack(warm: WarmContainer, reusable: boolean): void {
    warm.actions++;
    if (!reusable || this.closed || warm.actions >= this.options.maxActionsPerContainer) {
      this.discard(warm);
      return;
    }
    this.idle.push(warm);
    if (this.idle.length > this.options.maxIdle) this.discard(this.idle.shift()!);
  }

  /** Kills and removes the container and its mount directory, not waiting for it. */
  discard(warm: WarmContainer): void {
    const removal = this.options
      .remove(warm.container)
      .catch(() => undefined)
      .then(() => rmSync(warm.mountDirectory, { recursive: true, force: true }));
    this.removals.add(removal);
    void removal.finally(() => this.removals.delete(removal));
  }

  /** Removes every idle container and waits for the removals under way. */
  async close(): Promise<void> {
    this.closed = true;
    for (const warm of this.idle.splice(0)) this.discard(warm);
    await Promise.allSettled([...this.removals]);
  }
}

/** Makes the host side of a container's mount: a directory only its owner (the executor) may change. */
export function makeMountDirectory(path: string): void {
  mkdirSync(path, { mode: 0o755 });
}
