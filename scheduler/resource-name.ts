import { InvalidArgumentError, parseDigestParts, reapi, type Digest } from '../src/core/index.js';
import { quotedName, RESERVED_INSTANCE_SEGMENTS } from './instance-name.js';

/** A blob named by a ByteStream resource name. */
interface BlobResourceName {
  readonly instanceName: string;
  readonly digest: Digest;
  /** IDENTITY for `blobs/`, ZSTD for `compressed-blobs/zstd/`. */
  readonly compressor: reapi.Compressor_Value;
}

/** An upload named by a ByteStream Write resource name. */
export interface UploadResourceName extends BlobResourceName {
  readonly uuid: string;
  /** Identifies the upload across streams (for resuming): everything but the optional metadata. */
  readonly uploadKey: string;
}

const FIELD = 'resource_name';
const HEX64 = /^[0-9a-f]{64}$/;
const DIGEST_FUNCTION_NAMES = new Set(
  Object.keys(reapi.DigestFunction_Value)
    .filter((k) => Number.isNaN(Number(k)) && k !== 'UNKNOWN')
    .map((k) => k.toLowerCase()),
);

/**
 * `{instance}/blobs/{hash}/{size}` or `{instance}/compressed-blobs/zstd/{hash}/{size}`, the instance part
 * omitted (with its slash) for the default instance.
 * @throws InvalidArgumentError naming resource_name and what is wrong
 */
export function parseReadResourceName(name: string): BlobResourceName {
  const segments = splitName(name);
  const { instanceName, at } = instancePart(segments, name);
  const kind = segments[at];
  if (kind !== 'blobs' && kind !== 'compressed-blobs') {
    throw malformed(name, `expected "blobs" or "compressed-blobs" after the instance name, found ${quotedName(kind ?? '')}`);
  }
  const { compressor, digest, next } = blobPart(segments, at, name);
  if (next !== segments.length) throw malformed(name, `unexpected ${quotedName(segments.slice(next).join('/'))} after the size`);
  return { instanceName, digest, compressor };
}

/**
 * `{instance}/uploads/{uuid}/blobs/{hash}/{size}[/{metadata}]` or
 * `{instance}/uploads/{uuid}/compressed-blobs/zstd/{hash}/{size}[/{metadata}]`.
 * @throws InvalidArgumentError naming resource_name and what is wrong
 */
export function parseWriteResourceName(name: string): UploadResourceName {
  const segments = splitName(name);
  const { instanceName, at } = instancePart(segments, name);
  if (segments[at] !== 'uploads') throw malformed(name, `expected "uploads" after the instance name, found ${quotedName(segments[at] ?? '')}`);
  const uuid = segments[at + 1];
  if (uuid === undefined || uuid === '') throw malformed(name, 'missing the upload id after "uploads/"');
  const kind = segments[at + 2];
  if (kind !== 'blobs' && kind !== 'compressed-blobs') {
    throw malformed(name, `expected "blobs" or "compressed-blobs" after the upload id, found ${kind === undefined ? 'nothing' : quotedName(kind)}`);
  }
  const { compressor, digest, next } = blobPart(segments, at + 2, name);
  const uploadKey = segments.slice(0, next).join('/');
  return { instanceName, digest, compressor, uuid, uploadKey };
}

function splitName(name: string): string[] {
  if (name === '') throw new InvalidArgumentError(`${FIELD}: missing (empty resource name)`);
  return name.split('/');
}

/** The instance name: the segments before the first reserved one. */
function instancePart(segments: string[], name: string): { instanceName: string; at: number } {
  const at = segments.findIndex((s) => RESERVED_INSTANCE_SEGMENTS.has(s));
  if (at < 0) throw malformed(name, 'no "blobs", "compressed-blobs" or "uploads" segment');
  const instance = segments.slice(0, at);
  if (instance.some((s) => s === '')) throw malformed(name, 'the instance name has an empty path segment');
  return { instanceName: instance.join('/'), at };
}

/** Parses `blobs/{df/}{hash}/{size}` or `compressed-blobs/{compressor}/{df/}{hash}/{size}` starting at `at`. */
function blobPart(segments: string[], at: number, name: string): { compressor: reapi.Compressor_Value; digest: Digest; next: number } {
  let i = at + 1;
  let compressor = reapi.Compressor_Value.IDENTITY;
  if (segments[at] === 'compressed-blobs') {
    const c = segments[i++];
    if (c === 'zstd') compressor = reapi.Compressor_Value.ZSTD;
    else if (c === 'deflate' || c === 'brotli') throw malformed(name, `compressor ${quotedName(c)} is not supported (supported: zstd)`);
    else throw malformed(name, `unknown compressor ${c === undefined ? '(missing)' : quotedName(c)} (supported: zstd)`);
  }
  const maybeFunction = segments[i];
  if (maybeFunction !== undefined && !HEX64.test(maybeFunction) && DIGEST_FUNCTION_NAMES.has(maybeFunction)) {
    if (maybeFunction !== 'sha256') throw malformed(name, `digest function "${maybeFunction}" is not supported; this server uses SHA256 only`);
    i++;
  }
  const hash = segments[i];
  const size = segments[i + 1];
  if (hash === undefined || size === undefined) throw malformed(name, 'expected "{hash}/{size}"');
  const digest = parseDigestParts(hash, size, `${FIELD} ${quotedName(name)}`);
  return { compressor, digest, next: i + 2 };
}

function malformed(name: string, what: string): InvalidArgumentError {
  return new InvalidArgumentError(`${FIELD} ${quotedName(name)}: ${what}`);
}
