import { Readable } from 'node:stream';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DigestHasher,
  EMPTY_DIGEST,
  InvalidArgumentError,
  digestEquals,
  digestKey,
  digestOf,
  digestOfFile,
  digestOfMessage,
  digestOfStream,
  encodeMessage,
  isEmptyDigest,
  parseDigest,
  parseDigestKey,
  parseDigestParts,
  reapi,
} from '../../../src/core/index.js';

const HELLO = '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824';

describe('parseDigest', () => {
  it('accepts 64 lowercase hex characters and a non-negative size', () => {
    expect(parseDigest({ hash: HELLO, sizeBytes: 5 })).toEqual({ hash: HELLO, sizeBytes: 5 });
    expect(parseDigest({ hash: EMPTY_DIGEST.hash })).toEqual(EMPTY_DIGEST);
  });

  it.each([
    [{ hash: HELLO.toUpperCase(), sizeBytes: 5 }, /hash must be 64 lowercase hex/],
    [{ hash: HELLO.slice(1), sizeBytes: 5 }, /hash must be 64 lowercase hex/],
    [{ hash: `${HELLO}0`, sizeBytes: 5 }, /hash must be 64 lowercase hex/],
    [{ hash: 'g'.repeat(64), sizeBytes: 5 }, /hash must be 64 lowercase hex/],
    [{ sizeBytes: 5 }, /hash must be 64 lowercase hex/],
    [{ hash: HELLO, sizeBytes: -1 }, /size_bytes must be a non-negative integer, got -1/],
    [{ hash: HELLO, sizeBytes: 1.5 }, /size_bytes must be a non-negative integer/],
    [{ hash: HELLO, sizeBytes: 2 ** 53 }, /size_bytes must be a non-negative integer/],
    [null, /missing digest/],
  ])('rejects %j as INVALID_ARGUMENT naming the field', (value, message) => {
    const error = (() => {
      try {
        parseDigest(value, 'blob_digests[2]');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(/^blob_digests\[2\]: /);
    expect((error as Error).message).toMatch(message);
  });

  it('shortens absurdly long input in messages', () => {
    expect(() => parseDigest({ hash: 'x'.repeat(10_000) })).toThrow(/\.\.\."/);
  });
});

describe('digest keys and resource name parts', () => {
  it('round-trips hash/size keys', () => {
    const d = { hash: HELLO, sizeBytes: 5 };
    expect(digestKey(d)).toBe(`${HELLO}/5`);
    expect(parseDigestKey(digestKey(d))).toEqual(d);
  });

  it.each(['5x', '-5', '05', '', '1e3', ' 5'])('rejects size %j', (size) => {
    expect(() => parseDigestParts(HELLO, size)).toThrow(InvalidArgumentError);
  });

  it('rejects a key without a slash', () => {
    expect(() => parseDigestKey(HELLO)).toThrow(/expected "hash\/size"/);
  });

  it('compares digests by value', () => {
    expect(digestEquals({ hash: HELLO, sizeBytes: 5 }, { hash: HELLO, sizeBytes: 5 })).toBe(true);
    expect(digestEquals({ hash: HELLO, sizeBytes: 5 }, { hash: HELLO, sizeBytes: 6 })).toBe(false);
    expect(isEmptyDigest(digestOf(Buffer.alloc(0)))).toBe(true);
    expect(isEmptyDigest({ hash: EMPTY_DIGEST.hash, sizeBytes: 1 })).toBe(false);
  });
});

describe('SHA-256 digests', () => {
  it('hashes buffers', () => {
    expect(digestOf(Buffer.from('hello'))).toEqual({ hash: HELLO, sizeBytes: 5 });
    expect(digestOf(new Uint8Array(0))).toEqual(EMPTY_DIGEST);
  });

  it('hashes streams and incremental input the same as whole buffers', async () => {
    const data = Buffer.alloc(3 * 1024 * 1024 + 7, 'kiln');
    const expected = digestOf(data);
    const chunks = [data.subarray(0, 1), data.subarray(1, 65536), data.subarray(65536)];
    expect(await digestOfStream(Readable.from(chunks))).toEqual(expected);
    const hasher = new DigestHasher();
    for (const c of chunks) hasher.update(c);
    expect(hasher.sizeBytes).toBe(data.length);
    expect(hasher.digest()).toEqual(expected);
  });

  it('hashes files', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kiln-digest-'));
    try {
      const data = Buffer.alloc(2 * 1024 * 1024 + 3, 'f');
      await writeFile(join(dir, 'f'), data);
      expect(await digestOfFile(join(dir, 'f'))).toEqual(digestOf(data));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('hashes the canonical encoding of messages', () => {
    const command = { arguments: ['echo', 'hi'], outputPaths: ['out'] };
    const encoded = encodeMessage(reapi.Command, command);
    expect(encoded.digest).toEqual(digestOfMessage(reapi.Command, command));
    expect(encoded.digest.hash).toBe(createHash('sha256').update(reapi.Command.encode(command)).digest('hex'));
    expect(encoded.digest.sizeBytes).toBe(encoded.data.length);
  });

  it('gives an Action with an empty input root the digest other clients compute', () => {
    // Hand-encoded Action { input_root_digest { hash: <empty> } }: size_bytes 0 is omitted on the wire.
    const expected = Buffer.concat([Buffer.from([0x12, 66, 0x0a, 64]), Buffer.from(EMPTY_DIGEST.hash)]);
    expect(reapi.Action.encode({ inputRootDigest: EMPTY_DIGEST }).equals(expected)).toBe(true);
  });
});
