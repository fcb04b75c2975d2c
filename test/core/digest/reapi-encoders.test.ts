import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reapi } from '../../../src/core/index.js';
import { encodeAction, encodeCommand, encodeDirectory, encodeRequestMetadata } from '../../../src/core/digest/reapi-encoders.js';

// Well-formed strings of any code points (a lone surrogate is no file name, and UTF-8 cannot carry it),
// often empty, sometimes long (nested lengths of two and three bytes).
const text = fc.oneof(fc.constant(''), fc.string({ unit: 'grapheme', maxLength: 12 }), fc.string({ unit: 'grapheme-ascii', minLength: 100, maxLength: 400 }));
const size = fc.oneof(fc.constant(0), fc.nat(200), fc.maxSafeNat());
const digest = fc.record({ hash: fc.oneof(fc.constant(''), fc.stringMatching(/^[0-9a-f]{64}$/)), sizeBytes: size });
const nameValue = fc.record({ name: text, value: text });
const platform = fc.option(fc.record({ properties: fc.array(nameValue, { maxLength: 3 }) }, { requiredKeys: [] }), { nil: undefined });

const same = (fast: Buffer, generated: Uint8Array): void => {
  expect(fast.toString('hex')).toBe(Buffer.from(generated).toString('hex'));
};

describe('hand-written REAPI encoders', () => {
  it('encode a Directory byte for byte as the generated codec', () => {
    const directory = fc.record(
      {
        files: fc.array(fc.record({ name: text, digest, isExecutable: fc.boolean() }, { requiredKeys: ['name', 'digest'] }), { maxLength: 6 }),
        directories: fc.array(fc.record({ name: text, digest }), { maxLength: 4 }),
        symlinks: fc.array(fc.record({ name: text, target: text }), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(directory, (d) => same(encodeDirectory(d), reapi.Directory.encode(d))),
      { numRuns: 1000 },
    );
  });

  it('encode a Command byte for byte as the generated codec', () => {
    const paths = fc.array(text, { maxLength: 4 });
    const command = fc.record(
      {
        arguments: fc.array(text, { maxLength: 6 }),
        environmentVariables: fc.array(nameValue, { maxLength: 4 }),
        outputFiles: paths,
        outputDirectories: paths,
        platform,
        outputPaths: paths,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(command, (c) => same(encodeCommand(c), reapi.Command.encode(c))),
      { numRuns: 1000 },
    );
  });

  it('encode an Action byte for byte as the generated codec', () => {
    const timeout = fc.option(fc.record({ seconds: fc.oneof(fc.constant(0), fc.nat(100_000)), nanos: fc.oneof(fc.constant(0), fc.nat(999_999_999)) }), {
      nil: undefined,
    });
    const action = fc.record(
      { commandDigest: digest, inputRootDigest: digest, timeout, doNotCache: fc.option(fc.boolean(), { nil: undefined }), platform },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(action, (a) => same(encodeAction(a), reapi.Action.encode(a))),
      { numRuns: 1000 },
    );
  });

  it('encode a RequestMetadata byte for byte as the generated codec', () => {
    const metadata = fc.record(
      {
        toolDetails: fc.record({ toolName: text, toolVersion: text }),
        actionId: text,
        toolInvocationId: text,
        correlatedInvocationsId: text,
        actionMnemonic: text,
        targetId: text,
        configurationId: text,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(metadata, (m) => same(encodeRequestMetadata(m), reapi.RequestMetadata.encode(m))),
      { numRuns: 1000 },
    );
  });

  it('refuse a size no number holds exactly, as the generated codec does', () => {
    const tooLarge = { files: [{ name: 'f', digest: { hash: 'a', sizeBytes: 2 ** 53 } }] };
    expect(() => encodeDirectory(tooLarge)).toThrow(RangeError);
    expect(() => reapi.Directory.encode(tooLarge)).toThrow(RangeError);
    // The failed encode left nothing behind for the next one.
    const fine = { files: [{ name: 'f', digest: { hash: 'a', sizeBytes: 1 } }] };
    same(encodeDirectory(fine), reapi.Directory.encode(fine));
  });
});
