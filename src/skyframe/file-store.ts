import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { PersistedEntry, PersistentStore } from './evaluator.js';

/**
 * A PersistentStore in one JSON file (read on first use, written once per run, atomically by
 * rename). `version` guards against entries written by another Kiln build: a mismatch starts empty.
 * A run that needs no entry (its result was cached further up) never reads the file.
 */
export class FileStore implements PersistentStore {
  private loaded: Map<string, PersistedEntry> | undefined;
  private dirty = false;

  constructor(
    private readonly path: string,
    private readonly version: string,
  ) {}

  private get entries(): Map<string, PersistedEntry> {
    if (this.loaded) return this.loaded;
    this.loaded = new Map();
    try {
      const parsed = JSON.parse(readFileSync(this.path, 'utf8')) as { version?: string; entries?: [string, PersistedEntry][] };
      if (parsed.version === this.version && Array.isArray(parsed.entries)) for (const [k, e] of parsed.entries) this.loaded.set(k, e);
    } catch {
      // Missing or unreadable: a cold cache.
    }
    return this.loaded;
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
