import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { producedFiles, type ProducedOutput } from '../actions/index.js';
import { reapi, type Digest } from '../core/index.js';
import { DiskBlobAccess, VerifyingBlobAccess, type BlobAccess } from '../core/blobstore/index.js';
import { resultFieldsOf, resultOutputs, writeProducedOutputs } from '../remote/index.js';

/** An output as stored in a cache: a file, a tree artifact with its contents, or a symlink. */
export type CachedOutput = ProducedOutput;

/**
 * `--disk_cache=DIR` in Bazel's layout: `DIR/cas/<2 hex>/<hash>` holds output contents (and the
 * REAPI `Tree` message of each output directory, named by `tree_digest`, as Bazel stores it),
 * `DIR/ac/<2 hex>/<action hash>` a serialized ActionResult. Blob files appear atomically (temp file +
 * rename, by DiskBlobAccess), contents are verified against their digest when read, and an
 * ActionResult is written only after every blob it names, so any reader (another checkout, another
 * machine sharing DIR, Bazel itself) sees only complete entries.
 */
export class DiskCache {
  private constructor(
    private readonly cas: BlobAccess,
    private readonly ac: BlobAccess,
  ) {}

  static async open(dir: string): Promise<DiskCache> {
    // Bazel's disk cache has no size limit by default; neither has ours.
    const limit = Number.MAX_SAFE_INTEGER;
    const cas = await DiskBlobAccess.open({ path: dir, maxBytes: limit, keyspace: 'cas' });
    const ac = await DiskBlobAccess.open({ path: dir, maxBytes: limit, keyspace: 'ac' });
    return new DiskCache(new VerifyingBlobAccess(cas), ac);
  }

  /**
   * The cached outputs of an action (only those in `declared`), or undefined when not cached, when
   * the entry is unreadable or names other paths, or when any file blob is gone.
   */
  async lookup(actionKey: Digest, declared: ReadonlySet<string>, unresolvedSymlinks: ReadonlySet<string>): Promise<CachedOutput[] | undefined> {
    let outputs: CachedOutput[];
    try {
      const result = reapi.ActionResult.decode(await this.ac.get(actionKey));
      if (result.exitCode !== 0) return undefined;
      outputs = await resultOutputs(result, declared, (d) => this.cas.get(d), { unresolvedSymlinks });
    } catch {
      return undefined; // absent, unreadable, or a tree gone: a miss
    }
    const missing = await this.cas.findMissing(producedFiles(outputs).map((o) => o.digest));
    return missing.length === 0 ? outputs : undefined;
  }

  /** Writes cached outputs under `execRoot` (files atomically); false when a blob vanished or was corrupt. */
  async restore(outputs: readonly CachedOutput[], execRoot: string): Promise<boolean> {
    try {
      await writeProducedOutputs(outputs, execRoot, (d) => this.cas.get(d));
      return true;
    } catch {
      return false;
    }
  }

  /** Stores an action's outputs (read from `execRoot`), the Tree of each output directory, then its ActionResult. */
  async store(actionKey: Digest, outputs: readonly CachedOutput[], execRoot: string): Promise<void> {
    const files = producedFiles(outputs);
    const { fields, treeBlobs } = resultFieldsOf(outputs);
    const missing = new Set((await this.cas.findMissing([...files.map((o) => o.digest), ...treeBlobs.map((t) => t.digest)])).map((d) => d.hash));
    for (const file of files) {
      if (!missing.has(file.digest.hash)) continue;
      missing.delete(file.digest.hash);
      await this.cas.put(file.digest, await readFile(join(execRoot, file.path)));
    }
    for (const tree of treeBlobs) if (missing.has(tree.digest.hash)) await this.cas.put(tree.digest, tree.data);
    const result = reapi.ActionResult.encode({ ...fields, exitCode: 0 });
    await this.ac.put({ hash: actionKey.hash, sizeBytes: result.length }, result);
  }
}
