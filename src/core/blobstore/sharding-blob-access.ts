import type { Digest } from '../digest/digest.js';
import { isStatusError } from '../status-error.js';
import type { BlobAccess, BlobRead, BlobWriter, ReadRange } from './blob-access.js';
import { RendezvousHashing } from './rendezvous-hashing.js';

/** One backend of a sharded store. */
export interface Shard {
  /** Keys hash against the name: keep it when the backend moves (a new address, a replaced disk). */
  readonly name: string;
  readonly weight: number;
  readonly backend: BlobAccess;
}

/**
 * Spreads blobs over several backends by weighted rendezvous hashing of their digest (Buildbarn's
 * ShardingBlobAccess with its rendezvous selector): every operation on a blob goes to the one shard
 * its hash picks; findMissing asks each shard about its own digests, all shards at once. Adding a
 * shard moves only the blobs that now hash to it. Errors keep their code and name the shard.
 */
export class ShardingBlobAccess implements BlobAccess {
  private readonly hashing: RendezvousHashing;

  constructor(private readonly shards: readonly Shard[]) {
    this.hashing = new RendezvousHashing(shards);
  }

  /** The shard a digest goes to (for tests and logs). */
  shardOf(digest: Digest): Shard {
    return this.shards[this.hashing.memberOf(digest.hash)]!;
  }

  get(digest: Digest): Promise<Buffer> {
    return this.on(digest, (b) => b.get(digest));
  }

  read(digest: Digest, range?: ReadRange): Promise<BlobRead> {
    return this.on(digest, (b) => b.read(digest, range));
  }

  put(digest: Digest, data: Buffer): Promise<void> {
    return this.on(digest, (b) => b.put(digest, data));
  }

  beginWrite(digest: Digest): Promise<BlobWriter> {
    return this.on(digest, (b) => b.beginWrite(digest));
  }

  delete(digest: Digest): Promise<void> {
    return this.on(digest, (b) => b.delete(digest));
  }

  async findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    const byShard = new Map<number, Digest[]>();
    for (const d of digests) {
      const index = this.hashing.memberOf(d.hash);
      const list = byShard.get(index);
      if (list) list.push(d);
      else byShard.set(index, [d]);
    }
    const answers = await Promise.all([...byShard].map(([index, asked]) => named(this.shards[index]!, () => this.shards[index]!.backend.findMissing(asked))));
    return answers.flat();
  }

  private on<T>(digest: Digest, op: (backend: BlobAccess) => Promise<T>): Promise<T> {
    const shard = this.shardOf(digest);
    return named(shard, () => op(shard.backend));
  }
}

/** `op`'s failure with the shard's name before its message (its class and code kept). */
async function named<T>(shard: Shard, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    throw isStatusError(e) ? e.withContext(`shard ${JSON.stringify(shard.name)}`) : e;
  }
}
