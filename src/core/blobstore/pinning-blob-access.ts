import type { Digest } from '../digest/digest.js';
import type { BlobAccess, BlobRead, BlobWriter, ReadRange } from './blob-access.js';
import type { BlobPins } from './blob-pins.js';

/**
 * Decorator that pins (BlobPins) every blob a client is told exists or has just stored: those
 * findMissing says present (FindMissingBlobs, and the outputs of an ActionResult, which the action
 * cache's completeness check looks up through this layer, the files of output directories included)
 * and those written (inputs uploaded for an action about to run, an executor's outputs). The disk
 * store beneath does not evict a pinned blob until its pin ends.
 */
export class PinningBlobAccess implements BlobAccess {
  constructor(
    private readonly backend: BlobAccess,
    private readonly pins: BlobPins,
  ) {}

  async findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    // Pinned first, so that the answer is never stale: a blob evicted between the lookup and the pin would be reported present.
    this.pins.pin(digests);
    return this.backend.findMissing(digests);
  }

  async put(digest: Digest, data: Buffer): Promise<void> {
    this.pins.pin([digest]);
    await this.backend.put(digest, data);
  }

  async beginWrite(digest: Digest): Promise<BlobWriter> {
    this.pins.pin([digest]);
    return this.backend.beginWrite(digest);
  }

  get(digest: Digest): Promise<Buffer> {
    return this.backend.get(digest);
  }

  read(digest: Digest, range?: ReadRange): Promise<BlobRead> {
    return this.backend.read(digest, range);
  }

  delete(digest: Digest): Promise<void> {
    return this.backend.delete(digest);
  }
}
