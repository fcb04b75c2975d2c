import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DiskBlobAccess, VerifyingBlobAccess, parseDigest, reapi, type BlobAccess, type Digest } from '../core/index.js';

/** An output file as stored in a cache. */
export interface CachedOutput {
  readonly path: string;
  readonly digest: Digest;
  readonly isExecutable: boolean;
}

/**
 * `--disk_cache=DIR` in Bazel's layout: `DIR/cas/<2 hex>/<hash>` holds output contents,
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

  /** The cached outputs of an action, or undefined when not cached or any output blob is gone. */
  async lookup(actionKey: Digest): Promise<CachedOutput[] | undefined> {
    let result: reapi.ActionResult;
    try {
      result = reapi.ActionResult.decode(await this.ac.get(actionKey));
    } catch {
      return undefined; // absent or unreadable: a miss
    }
    if (result.exitCode !== 0) return undefined;
    let outputs: CachedOutput[];
    try {
      outputs = result.outputFiles.map((f) => ({ path: f.path, digest: parseDigest(f.digest, 'output_files.digest'), isExecutable: f.isExecutable }));
    } catch {
      return undefined;
    }
    const missing = await this.cas.findMissing(outputs.map((o) => o.digest));
    return missing.length === 0 ? outputs : undefined;
  }

  /** Writes cached outputs under `execRoot`, each atomically; false when a blob vanished or was corrupt. */
  async restore(outputs: readonly CachedOutput[], execRoot: string): Promise<boolean> {
    for (const output of outputs) {
      let data: Buffer;
      try {
        data = await this.cas.get(output.digest);
      } catch {
        return false;
      }
      const target = join(execRoot, output.path);
      await mkdir(dirname(target), { recursive: true });
      const temp = `${target}.kiln-restore-${process.pid}`;
      await writeFile(temp, data);
      await chmod(temp, output.isExecutable ? 0o755 : 0o644);
      await rm(target, { recursive: true, force: true });
      await rename(temp, target);
    }
    return true;
  }

  /** Stores an action's outputs (read from `execRoot`) and then its ActionResult. */
  async store(actionKey: Digest, outputs: readonly CachedOutput[], execRoot: string): Promise<void> {
    const missing = new Set((await this.cas.findMissing(outputs.map((o) => o.digest))).map((d) => d.hash));
    for (const output of outputs) {
      if (!missing.has(output.digest.hash)) continue;
      await this.cas.put(output.digest, await readFile(join(execRoot, output.path)));
    }
    const result = reapi.ActionResult.encode({
      outputFiles: outputs.map((o) => ({ path: o.path, digest: o.digest, isExecutable: o.isExecutable })),
      exitCode: 0,
    });
    await this.ac.put({ hash: actionKey.hash, sizeBytes: result.length }, result);
  }
}
