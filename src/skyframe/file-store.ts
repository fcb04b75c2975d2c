import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { PersistedEntry, PersistentStore } from './evaluator.js';

/**
 * A PersistentStore in one JSON file (read once, written once per run, atomically by rename).
 * `version` guards against entries written by another Kiln build: a mismatch starts empty.
 */
export class FileStore implements PersistentStore {
  private readonly entries: Map<string, PersistedEntry>;
  private dirty = false;

  constructor(
    private readonly path: string,
    private readonly version: string,
  ) {
    this.entries = new Map();
    try {
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as { version?: string; entries?: [string, PersistedEntry][] };
      if (parsed.version === version && Array.isArray(parsed.entries)) for (const [k, e] of parsed.entries) this.entries.set(k, e);
    } catch {
      // Missing or unreadable: a cold cache.
    }
  }

  get(key: string): PersistedEntry | undefined {
    return this.entries.get(key);
  }

  set(key: string, entry: PersistedEntry): void {
    this.entries.set(key, entry);
    this.dirty = true;
  }

  /** Writes the file when anything changed. */
  flush(): void {
    if (!this.dirty) return;
    mkdirSync(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ version: this.version, entries: [...this.entries] }));
    renameSync(tmp, this.path);
    this.dirty = false;
  }
}
