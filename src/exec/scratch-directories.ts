import { lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The per-action scratch directories of a build, under one root. Making and removing a directory
 * costs 80-300 us on some file systems (ext4 mounted with `discard` frees its block at once), and
 * on the thread that starts actions that adds up to more than the action: a directory an action
 * leaves as it found it (nothing in it but empty directories of its own) serves the next action,
 * and anything else is removed off this thread.
 */
export class ScratchDirectories {
  private readonly free: string[] = [];
  private readonly removals = new Set<Promise<void>>();
  private next = 0;

  constructor(
    private readonly root: string,
    private readonly warn: (message: string) => void,
  ) {}

  /** An empty directory, or one holding only empty directories a previous action made. */
  acquire(): string {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    const dir = join(this.root, String(this.next++));
    mkdirSync(dir);
    return dir;
  }

  release(dir: string): void {
    if (holdsOnlyEmptyDirectories(dir)) this.free.push(dir);
    else this.removeInBackground(dir);
  }

  /** Resolves once every directory handed back for removal is gone. */
  async settled(): Promise<void> {
    while (this.removals.size > 0) await Promise.all(this.removals);
  }

  private removeInBackground(dir: string): void {
    const removal: Promise<void> = rm(dir, { recursive: true, force: true })
      .catch((e: Error) => this.warn(`could not remove ${dir}: ${e.message}`))
      .finally(() => this.removals.delete(removal));
    this.removals.add(removal);
  }
}

/** Only empty subdirectories that Kiln can still write into (an action may have changed their mode). */
function holdsOnlyEmptyDirectories(dir: string): boolean {
  try {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) return false;
      const path = join(dir, entry.name);
      if ((lstatSync(path).mode & 0o700) !== 0o700 || readdirSync(path).length > 0) return false;
    }
    return true;
  } catch {
    return false;
  }
}
