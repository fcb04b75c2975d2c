import { open } from 'node:fs/promises';
import { DigestHasher, digestEquals, digestKey, digestOf, InternalError, type Digest } from '../src/core/index.js';
import { createBlobAccess, type BlobAccess, type BlobAccessConfig } from '../src/core/blobstore/index.js';
import { RemoteStorage } from '../src/remote/index.js';
import type { ExecutorCas } from './cas-client.js';

/**
 * The executor's CAS straight from the cluster's storage (the storage nodes, sharded or mirrored,
 * described by the same BlobAccess config the scheduler's instance uses), so inputs and outputs do
 * not pass through the scheduler. Every blob read is checked against its digest before use: a
 * storage node may be broken, and a wrong input would make a wrong result the cache then serves.
 */
export class StorageCas implements ExecutorCas {
  private constructor(
    private readonly storage: BlobAccess,
    private readonly remote: RemoteStorage,
  ) {}

  /** @throws BlobAccessConfigError naming the field of `config` (under `where`) that is wrong */
  static async open(config: BlobAccessConfig, where = 'storage'): Promise<StorageCas> {
    const remote = new RemoteStorage();
    try {
      return new StorageCas(await createBlobAccess(config, { connectRemote: remote.connect }, where), remote);
    } catch (e) {
      remote.close();
      throw e;
    }
  }

  close(): void {
    this.remote.close();
  }

  async getMany(digests: readonly Digest[]): Promise<Map<string, Buffer>> {
    const unique = [...new Map(digests.map((d) => [digestKey(d), d])).values()];
    const blobs = await Promise.all(unique.map((d) => this.get(d)));
    return new Map(unique.map((d, i) => [digestKey(d), blobs[i]!]));
  }

  async get(digest: Digest): Promise<Buffer> {
    const data = await this.storage.get(digest);
    if (!digestEquals(digestOf(data), digest)) throw corrupt(digest);
    return data;
  }

  /** Streams a blob into a new file at `path` (created exclusively), checked against its digest as it comes. */
  async download(digest: Digest, path: string): Promise<void> {
    const read = await this.storage.read(digest);
    const hasher = new DigestHasher();
    const file = await open(path, 'wx');
    try {
      for await (const chunk of read.chunks) {
        hasher.update(chunk);
        await file.write(chunk);
      }
    } finally {
      await file.close();
    }
    if (!digestEquals(hasher.digest(), digest)) throw corrupt(digest);
  }

  async uploadMissing(digests: readonly Digest[], load: (digest: Digest) => Promise<Buffer>): Promise<void> {
    const missing = await this.storage.findMissing([...new Map(digests.map((d) => [digestKey(d), d])).values()]);
    for (const digest of missing) await this.storage.put(digest, await load(digest));
  }
}

function corrupt(digest: Digest): InternalError {
  return new InternalError(`storage returned blob ${digestKey(digest)} with other content: not used`);
}
