import { digestKey, InvalidArgumentError, NotFoundError, parseDigest, reapi, type Digest } from '../src/core/index.js';
import type { BlobAccess } from '../src/core/blobstore/index.js';

/** One GetTreeResponse: directories and the token that resumes after them ('' on the last page). */
interface TreePage {
  readonly directories: reapi.Directory[];
  readonly nextPageToken: string;
}

/** A response message stays well below gRPC's default 4 MiB limit. */
const MAX_PAGE_BYTES = 3 * 1024 * 1024;

interface PageToken {
  /** The root the token belongs to. */
  readonly r: string;
  /** Directories already returned. */
  readonly n: number;
}

/**
 * Every Directory reachable from `root`, breadth first, each distinct digest once, in pages of at most
 * `pageSize` directories. The order is deterministic, so a page token (an opaque encoding of the root
 * and the count already returned) resumes exactly where a broken stream stopped. As REAPI specifies,
 * parts of the tree missing from the CAS are left out; only a missing root is NOT_FOUND. `limit` bounds
 * the directory reads running at once (a wide level may hold thousands).
 * @throws InvalidArgumentError for a malformed or foreign page token, or a blob that is not a Directory
 */
export async function* treePages(
  cas: BlobAccess,
  root: Digest,
  pageSize: number,
  pageToken: string,
  limit: <T>(task: () => Promise<T>) => Promise<T> = (task) => task(),
): AsyncGenerator<TreePage> {
  const rootKey = digestKey(root);
  const skip = pageToken === '' ? 0 : decodeToken(pageToken, rootKey);
  let returned = 0;
  let page: reapi.Directory[] = [];
  let pageBytes = 0;
  const seen = new Set<string>([rootKey]);
  let level: Digest[] = [root];
  let sawAny = false;
  while (level.length > 0) {
    const next: Digest[] = [];
    const directories = await Promise.all(level.map((d) => limit(() => fetchDirectory(cas, d))));
    for (let i = 0; i < level.length; i++) {
      const directory = directories[i];
      if (directory === undefined) {
        if (level[i] === root) throw new NotFoundError(`root_digest: directory ${rootKey} not found`);
        continue;
      }
      sawAny = true;
      for (const [j, node] of directory.directories.entries()) {
        const child = parseDigest(node.digest, `directory ${digestKey(level[i]!)}: directories[${j}].digest`);
        const key = digestKey(child);
        if (!seen.has(key)) {
          seen.add(key);
          next.push(child);
        }
      }
      if (returned < skip) {
        returned++;
        continue;
      }
      const size = reapi.Directory.encode(directory).length;
      if (page.length > 0 && (page.length >= pageSize || pageBytes + size > MAX_PAGE_BYTES)) {
        yield { directories: page, nextPageToken: encodeToken({ r: rootKey, n: returned }) };
        page = [];
        pageBytes = 0;
      }
      page.push(directory);
      pageBytes += size;
      returned++;
    }
    level = next;
  }
  if (skip > returned) throw new InvalidArgumentError(`page_token: points past the end of the tree (${returned} directories)`);
  if (sawAny && (page.length > 0 || skip === returned)) yield { directories: page, nextPageToken: '' };
}

async function fetchDirectory(cas: BlobAccess, digest: Digest): Promise<reapi.Directory | undefined> {
  let data: Buffer;
  try {
    data = await cas.get(digest);
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
  try {
    return reapi.Directory.decode(data);
  } catch (e) {
    throw new InvalidArgumentError(`blob ${digestKey(digest)} is not a Directory message: ${(e as Error).message}`);
  }
}

function encodeToken(token: PageToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeToken(text: string, rootKey: string): number {
  let token: unknown;
  try {
    token = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidArgumentError('page_token: not a token this server issued');
  }
  const t = token as Partial<PageToken> | null;
  if (typeof t !== 'object' || t === null || typeof t.r !== 'string' || typeof t.n !== 'number' || !Number.isSafeInteger(t.n) || t.n < 0) {
    throw new InvalidArgumentError('page_token: not a token this server issued');
  }
  if (t.r !== rootKey) throw new InvalidArgumentError('page_token: belongs to a different root_digest');
  return t.n;
}
