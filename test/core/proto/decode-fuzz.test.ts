import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytestream, longrunning, parseDigest, parseDigestKey, reapi, StatusError } from '../../../src/core/index.js';

// Any bytes a client sends give a message or a clean Error, never a crash or a hang.
const codecs = [
  reapi.Action,
  reapi.Command,
  reapi.Directory,
  reapi.Tree,
  reapi.ActionResult,
  reapi.ExecuteRequest,
  reapi.BatchUpdateBlobsRequest,
  reapi.FindMissingBlobsRequest,
  reapi.GetTreeRequest,
  reapi.SpliceBlobRequest,
  reapi.RequestMetadata,
  bytestream.WriteRequest,
  bytestream.ReadRequest,
  longrunning.Operation,
];

describe('decoding untrusted bytes', () => {
  it.each(codecs.map((c) => [c.typeName, c] as const))('%s decodes or throws an Error', (_name, codec) => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
        try {
          const message = codec.decode(bytes);
          // Whatever decoded must encode again.
          codec.encode(message as never);
        } catch (e) {
          expect(e).toBeInstanceOf(Error);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('survives mutations of valid messages', () => {
    const valid = reapi.ActionResult.encode({
      outputFiles: [{ path: 'a/b', digest: { hash: 'a'.repeat(64), sizeBytes: 3 }, isExecutable: true }],
      outputDirectories: [{ path: 'd', treeDigest: { hash: 'b'.repeat(64), sizeBytes: 9 } }],
      exitCode: 1,
      stderrRaw: Buffer.from('err'),
    });
    fc.assert(
      fc.property(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 }), (at, byte) => {
        const copy = Buffer.from(valid);
        copy[at] = byte;
        try {
          reapi.ActionResult.decode(copy);
        } catch (e) {
          expect(e).toBeInstanceOf(Error);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('rejects deeply nested unknown groups with an error, not a stack overflow', () => {
    // 100,000 nested start-group tags of an unknown field (field 15, wire type 3).
    const bytes = Buffer.alloc(100_000, 0x7b);
    let error: unknown;
    try {
      reapi.Digest.decode(bytes);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).not.toMatch(/call stack/);
  });
});

describe('parsing untrusted digests', () => {
  it('returns a digest or throws a StatusError for any input', () => {
    fc.assert(
      fc.property(fc.record({ hash: fc.oneof(fc.string(), fc.stringMatching(/^[0-9a-f]{64}$/)), sizeBytes: fc.oneof(fc.integer(), fc.double()) }), (value) => {
        try {
          const d = parseDigest(value);
          expect(d.hash).toMatch(/^[0-9a-f]{64}$/);
          expect(Number.isSafeInteger(d.sizeBytes) && d.sizeBytes >= 0).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(StatusError);
        }
      }),
    );
    fc.assert(
      fc.property(fc.string(), (key) => {
        try {
          parseDigestKey(key);
        } catch (e) {
          expect(e).toBeInstanceOf(StatusError);
        }
      }),
    );
  });
});
