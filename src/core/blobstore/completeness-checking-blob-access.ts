import { digestKey, parseDigest, type Digest, type DigestLike } from '../digest/digest.js';
import { reapi, type MessageCodec } from '../proto.js';
import { NotFoundError } from '../status-error.js';
import type { BlobAccess, BlobAccessLogger, BlobRead, BlobWriter, ReadRange } from './blob-access.js';
import { bufferRead } from './read-range.js';

/** How many digests one findMissing call carries. */
const FIND_MISSING_BATCH = 10_000;

export interface CompletenessCheckingBlobAccessOptions {
  /** The CAS the action results refer to. */
  readonly contentAddressableStorage: BlobAccess;
  readonly logger?: BlobAccessLogger;
}

/**
 * Decorator for the action cache: an ActionResult is served only while everything it refers to is in
 * the CAS (output files, stdout/stderr, output directories' Tree blobs or root Directory blobs, and every
 * file inside those trees). Otherwise it is NOT_FOUND, so the client runs the action again instead of
 * getting a hit that fails when it downloads the outputs (Buildbarn's CompletenessCheckingBlobAccess).
 */
export class CompletenessCheckingBlobAccess implements BlobAccess {
  constructor(
    private readonly backend: BlobAccess,
    private readonly options: CompletenessCheckingBlobAccessOptions,
  ) {}

  async get(digest: Digest): Promise<Buffer> {
    const data = await this.backend.get(digest);
    let result: reapi.ActionResult;
    try {
      result = reapi.ActionResult.decode(data);
    } catch (e) {
      this.options.logger?.warn(`action cache entry ${digestKey(digest)} is not a valid ActionResult: ${(e as Error).message}`);
      throw new NotFoundError(`action result ${digestKey(digest)} not found (the stored entry is unreadable)`, undefined, { cause: e });
    }
    const missing = await findMissingReferencedBlobs(result, this.options.contentAddressableStorage);
    if (missing.length > 0) {
      throw new NotFoundError(
        `action result ${digestKey(digest)} not found: ${missing.length} of its outputs are no longer in the CAS (e.g. ${digestKey(missing[0]!)})`,
      );
    }
    return data;
  }

  async read(digest: Digest, range?: ReadRange): Promise<BlobRead> {
    return bufferRead(await this.get(digest), range);
  }

  put(digest: Digest, data: Buffer): Promise<void> {
    return this.backend.put(digest, data);
  }

  beginWrite(digest: Digest): Promise<BlobWriter> {
    return this.backend.beginWrite(digest);
  }

  findMissing(digests: readonly Digest[]): Promise<Digest[]> {
    return this.backend.findMissing(digests);
  }

  delete(digest: Digest): Promise<void> {
    return this.backend.delete(digest);
  }
}

/**
 * Every blob an ActionResult refers to that `cas` does not hold, including the files inside its output
 * directories. A Tree or Directory blob that is itself missing is reported (its contents cannot be
 * checked). A malformed digest inside the result counts as missing. UpdateActionResult can use this to
 * refuse results whose outputs were not uploaded.
 */
export async function findMissingReferencedBlobs(result: reapi.ActionResult, cas: BlobAccess): Promise<Digest[]> {
  const needed = new Map<string, Digest>();
  const invalid: Digest[] = [];
  const need = (d: DigestLike | null | undefined): Digest | undefined => {
    if (d === null || d === undefined) return undefined;
    try {
      const digest = parseDigest(d);
      needed.set(digestKey(digest), digest);
      return digest;
    } catch {
      invalid.push({ hash: d.hash ?? '', sizeBytes: d.sizeBytes ?? 0 });
      return undefined;
    }
  };

  for (const file of result.outputFiles) need(file.digest);
  need(result.stdoutDigest);
  need(result.stderrDigest);

  const missingContainers: Digest[] = [];
  for (const dir of result.outputDirectories) {
    const tree = need(dir.treeDigest);
    const root = need(dir.rootDirectoryDigest);
    if (tree) {
      const decoded = await getMessage(cas, tree, reapi.Tree);
      if (!decoded) missingContainers.push(tree);
      else for (const d of [...(decoded.root ? [decoded.root] : []), ...decoded.children]) collectFiles(d, need);
    } else if (root) {
      await walkDirectories(cas, root, need, missingContainers);
    }
  }

  const all = [...needed.values()];
  const missing: Digest[] = [...invalid, ...missingContainers];
  const seen = new Set(missingContainers.map(digestKey));
  for (let i = 0; i < all.length; i += FIND_MISSING_BATCH) {
    for (const d of await cas.findMissing(all.slice(i, i + FIND_MISSING_BATCH))) {
      if (!seen.has(digestKey(d))) missing.push(d);
    }
  }
  return missing;
}

function collectFiles(directory: reapi.Directory, need: (d: DigestLike | null | undefined) => unknown): void {
  for (const file of directory.files) need(file.digest);
}

/** Follows a Directory and its subdirectories through the CAS (output directories stored DIRECTORY_ONLY). */
async function walkDirectories(
  cas: BlobAccess,
  root: Digest,
  need: (d: DigestLike | null | undefined) => Digest | undefined,
  missingContainers: Digest[],
): Promise<void> {
  const visited = new Set<string>();
  const queue = [root];
  while (queue.length > 0) {
    const digest = queue.pop()!;
    const key = digestKey(digest);
    if (visited.has(key)) continue;
    visited.add(key);
    const directory = await getMessage(cas, digest, reapi.Directory);
    if (!directory) {
      missingContainers.push(digest);
      continue;
    }
    collectFiles(directory, need);
    for (const sub of directory.directories) {
      const child = need(sub.digest);
      if (child) queue.push(child);
    }
  }
}

/**
 * A message stored in the CAS, or undefined when it is missing, corrupt (a verifying CAS reports that as
 * missing) or does not decode: in each case the outputs cannot be served.
 */
async function getMessage<T, I>(cas: BlobAccess, digest: Digest, codec: MessageCodec<T, I>): Promise<T | undefined> {
  let data: Buffer;
  try {
    data = await cas.get(digest);
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
  try {
    return codec.decode(data);
  } catch {
    return undefined;
  }
}
