import { readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { producedFiles, type ProducedOutput } from '../actions/index.js';
import { NotFoundError, reapi, type Digest } from '../core/index.js';
import { DiskBlobAccess, VerifyingBlobAccess, type BlobAccess } from '../core/blobstore/index.js';
import { BlobContentError, resultFieldsOf, resultOutputs, writeProducedOutputs, writeVerifiedChunks, type DeclaredOutputKinds } from '../remote/index.js';

/**
 * `--disk_cache=DIR` in Bazel's layout: `DIR/cas/<2 hex>/<hash>` holds output contents (and the
 * REAPI `Tree` message of each output directory, named by `tree_digest`, as Bazel stores it),
 * `DIR/ac/<2 hex>/<action hash>` a serialized ActionResult. Blob files appear atomically (temp file +
 * rename, by DiskBlobAccess), contents are verified against their digest when read, and an
 * ActionResult is written only after every blob it names, so any reader (another checkout, another
 * machine sharing DIR, Bazel itself) sees only complete entries. An entry is as untrusted as a remote
 * server's answer (anyone who can write DIR wrote it): it passes the same checks, and one that fails
 * them is deleted, so the next build rebuilds the action and writes it again.
 */
export class DiskCache {
  private constructor(
    private readonly cas: BlobAccess,
    /** The same files unverified: large blobs are streamed from it and checked on the way. */
    private readonly rawCas: BlobAccess,
    private readonly ac: BlobAccess,
  ) {}

  static async open(dir: string): Promise<DiskCache> {
    // Bazel's disk cache has no size limit by default; neither has ours.
    const limit = Number.MAX_SAFE_INTEGER;
    const cas = await DiskBlobAccess.open({ path: dir, maxBytes: limit, keyspace: 'cas' });
    const ac = await DiskBlobAccess.open({ path: dir, maxBytes: limit, keyspace: 'ac' });
    return new DiskCache(new VerifyingBlobAccess(cas), cas, ac);
  }

  /**
   * The cached outputs of an action, checked against its declared outputs (path and kind, trees within
   * their bounds: `resultOutputs`); undefined when not cached or when a file blob is gone. An entry that
   * is unreadable or fails a check is deleted.
   */
  async lookup(actionKey: Digest, declared: DeclaredOutputKinds): Promise<ProducedOutput[] | undefined> {
    let data: Buffer;
    try {
      data = await this.ac.get(actionKey);
    } catch {
      return undefined; // absent (or unreadable: nothing to delete that we could read)
    }
    let outputs: ProducedOutput[];
    try {
      const result = reapi.ActionResult.decode(data);
      if (result.exitCode !== 0) return undefined;
      outputs = await resultOutputs(result, declared, (d) => this.cas.get(d));
    } catch (e) {
      // A Tree blob gone is only a miss; anything else is an entry no build can use.
      if (!(e instanceof NotFoundError)) await this.discard(actionKey);
      return undefined;
    }
    const missing = await this.cas.findMissing(producedFiles(outputs).map((o) => o.digest));
    return missing.length === 0 ? outputs : undefined;
  }

  /** Deletes an action's entry (one that failed the checks), so the next build rewrites it. */
  async discard(actionKey: Digest): Promise<void> {
    await this.ac.delete(actionKey);
  }

  /** Writes cached outputs under `execRoot` (files atomically); false when a blob vanished or was corrupt. */
  async restore(outputs: readonly ProducedOutput[], execRoot: string): Promise<boolean> {
    try {
      await writeProducedOutputs(outputs, execRoot, { read: (d) => this.cas.get(d), readToFile: (d, file) => this.copyBlob(d, file) });
      return true;
    } catch {
      return false;
    }
  }

  /** Streams a large blob from its file into `file`, checked on the way; a blob that fails is deleted. */
  private async copyBlob(digest: Digest, file: FileHandle): Promise<void> {
    const { chunks } = await this.rawCas.read(digest);
    try {
      await writeVerifiedChunks(chunks, digest, file);
    } catch (e) {
      if (e instanceof BlobContentError) await this.rawCas.delete(digest);
      throw e;
    }
  }

  /** Stores an action's outputs (read from `execRoot`), the Tree of each output directory, then its ActionResult. */
  async store(actionKey: Digest, outputs: readonly ProducedOutput[], execRoot: string): Promise<void> {
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
