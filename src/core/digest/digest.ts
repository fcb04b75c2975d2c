import { InvalidArgumentError } from '../status-error.js';

/**
 * The address of a blob: the SHA-256 of its content as 64 lowercase hex characters and its size in
 * bytes. Built only by `parseDigest` (at the boundary, from untrusted input) or by hashing, so code
 * that holds a Digest may trust it. Sizes are JS numbers: blobs are far below 2^53 bytes.
 */
export interface Digest {
  readonly hash: string;
  readonly sizeBytes: number;
}

export const SHA256_HEX_LENGTH = 64;

/** The digest of the empty blob, which every CAS holds implicitly. */
export const EMPTY_DIGEST: Digest = Object.freeze({
  hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  sizeBytes: 0,
});

const HEX64 = /^[0-9a-f]{64}$/;
const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** What a proto Digest looks like after decoding (all fields may be absent). */
export interface DigestLike {
  hash?: string | null;
  sizeBytes?: number | null;
}

/**
 * Validates an untrusted digest (a decoded proto field) and returns a trusted one.
 * `field` names the request field for the error message, e.g. `blob_digests[3]`.
 * @throws InvalidArgumentError for a missing digest, a hash that is not 64 lowercase hex characters,
 *   or a size that is negative, fractional or above 2^53.
 */
export function parseDigest(value: DigestLike | null | undefined, field = 'digest'): Digest {
  if (value === null || value === undefined) throw new InvalidArgumentError(`${field}: missing digest`);
  const hash = value.hash ?? '';
  const sizeBytes = value.sizeBytes ?? 0;
  if (!HEX64.test(hash)) {
    throw new InvalidArgumentError(`${field}: hash must be ${SHA256_HEX_LENGTH} lowercase hex characters (SHA-256), got ${JSON.stringify(truncate(hash))}`);
  }
  if (!Number.isSafeInteger(sizeBytes) || sizeBytes < 0) {
    throw new InvalidArgumentError(`${field}: size_bytes must be a non-negative integer, got ${String(sizeBytes)}`);
  }
  return { hash, sizeBytes };
}

/**
 * Parses the `{hash}/{size}` parts of a resource name or key string.
 * @throws InvalidArgumentError naming `field` when either part is malformed.
 */
export function parseDigestParts(hash: string, size: string, field = 'resource_name'): Digest {
  if (!DECIMAL.test(size)) throw new InvalidArgumentError(`${field}: size must be a decimal number, got ${JSON.stringify(truncate(size))}`);
  return parseDigest({ hash, sizeBytes: Number(size) }, field);
}

/** `hash/size`: the key of a digest in maps and logs, and its form in resource names. */
export function digestKey(digest: Digest): string {
  return `${digest.hash}/${digest.sizeBytes}`;
}

/** Parses a `hash/size` key string back into a digest. */
export function parseDigestKey(key: string, field = 'digest'): Digest {
  const slash = key.indexOf('/');
  if (slash < 0) throw new InvalidArgumentError(`${field}: expected "hash/size", got ${JSON.stringify(truncate(key))}`);
  return parseDigestParts(key.slice(0, slash), key.slice(slash + 1), field);
}

export function digestEquals(a: Digest, b: Digest): boolean {
  return a.hash === b.hash && a.sizeBytes === b.sizeBytes;
}

export function isEmptyDigest(digest: Digest): boolean {
  return digest.sizeBytes === 0 && digest.hash === EMPTY_DIGEST.hash;
}

function truncate(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
