import { afterEach, describe, expect, it } from 'vitest';
import {
  BlobAccessConfigError,
  CompletenessCheckingBlobAccess,
  createBlobAccess,
  DiskBlobAccess,
  ExistenceCachingBlobAccess,
  InvalidArgumentError,
  MemoryBlobAccess,
  NotFoundError,
  parseBlobAccessConfig,
  reapi,
  VerifyingBlobAccess,
  type BlobAccessConfig,
} from '../../../src/core/index.js';
import { blob, FakeClock, RecordingLogger, tempDir } from './fixtures.js';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('createBlobAccess', () => {
  it('builds each backend kind', async () => {
    const dir = await tempDir();
    cleanup = dir.cleanup;
    expect(await createBlobAccess({ kind: 'memory', maxBytes: 1000 })).toBeInstanceOf(MemoryBlobAccess);
    expect(await createBlobAccess({ kind: 'disk', path: dir.path, maxBytes: 1 << 20 })).toBeInstanceOf(DiskBlobAccess);
  });

  it('builds a decorated CAS and action cache that work together', async () => {
    const dir = await tempDir();
    cleanup = dir.cleanup;
    const logger = new RecordingLogger();
    const clock = new FakeClock();
    const cas = await createBlobAccess(
      { kind: 'existence-caching', ttlMs: 5000, backend: { kind: 'verifying', backend: { kind: 'disk', path: dir.path, maxBytes: 1 << 20 } } },
      { clock, logger },
    );
    expect(cas).toBeInstanceOf(ExistenceCachingBlobAccess);
    const ac = await createBlobAccess(
      { kind: 'completeness-checking', backend: { kind: 'disk', path: dir.path, maxBytes: 1 << 20, keyspace: 'ac' } },
      { clock, logger, contentAddressableStorage: cas },
    );
    expect(ac).toBeInstanceOf(CompletenessCheckingBlobAccess);

    const out = blob('an output');
    await expect(cas.put({ ...out.digest, sizeBytes: 3 }, out.data)).rejects.toBeInstanceOf(InvalidArgumentError);
    await cas.put(out.digest, out.data);
    const action = blob('action').digest;
    await ac.put(action, reapi.ActionResult.encode({ outputFiles: [{ path: 'o', digest: out.digest }] }));
    expect(reapi.ActionResult.decode(await ac.get(action)).outputFiles[0]?.digest?.hash).toBe(out.digest.hash);
    await cas.delete(out.digest);
    await expect(ac.get(action)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('wraps verifying around its backend with the given limit', async () => {
    expect(await createBlobAccess({ kind: 'verifying', wholeReadLimitBytes: 10, backend: { kind: 'memory', maxBytes: 100 } })).toBeInstanceOf(
      VerifyingBlobAccess,
    );
  });

  it('needs the CAS for completeness checking', async () => {
    await expect(createBlobAccess({ kind: 'completeness-checking', backend: { kind: 'memory', maxBytes: 100 } }, {}, 'ac')).rejects.toThrow(
      /^ac: "completeness-checking" needs the CAS/,
    );
  });
});

describe('parseBlobAccessConfig', () => {
  it('accepts a nested config from JSON', () => {
    const json = JSON.parse(
      '{"kind":"existence-caching","ttlMs":1000,"backend":{"kind":"verifying","backend":{"kind":"disk","path":"/var/cache/kiln","maxBytes":1073741824,"sync":true}}}',
    ) as unknown;
    const config: BlobAccessConfig = parseBlobAccessConfig(json);
    expect(config).toEqual({
      kind: 'existence-caching',
      ttlMs: 1000,
      backend: { kind: 'verifying', backend: { kind: 'disk', path: '/var/cache/kiln', maxBytes: 1073741824, sync: true } },
    });
  });

  it.each([
    [null, 'cas: must be an object with a "kind"'],
    [{ kind: 'tape' }, 'cas.kind: must be one of "memory", "disk", "blocks", "verifying", "existence-caching", "completeness-checking", got "tape"'],
    [{ kind: 'memory' }, 'cas.maxBytes: must be a positive integer, got undefined'],
    [{ kind: 'memory', maxBytes: -1 }, 'cas.maxBytes: must be a positive integer, got -1'],
    [{ kind: 'memory', maxBytes: 10, path: '/x' }, 'cas.path: unknown field for kind "memory" (allowed: kind, maxBytes)'],
    [{ kind: 'disk', maxBytes: 10 }, 'cas.path: must be a non-empty string'],
    [{ kind: 'disk', path: '/x', maxBytes: 10, keyspace: 'xyz' }, 'cas.keyspace: must be "cas" or "ac", got "xyz"'],
    [{ kind: 'disk', path: '/x', maxBytes: 10, sync: 'yes' }, 'cas.sync: must be true or false'],
    [{ kind: 'verifying', backend: { kind: 'memory', maxBytes: 1.5 } }, 'cas.backend.maxBytes: must be a positive integer, got 1.5'],
    [{ kind: 'existence-caching', backend: { kind: 'memory', maxBytes: 1 } }, 'cas.ttlMs: must be a positive integer, got undefined'],
    [{ kind: 'completeness-checking' }, 'cas.backend: must be an object with a "kind"'],
  ])('rejects %j naming the field', (value, message) => {
    let error: unknown;
    try {
      parseBlobAccessConfig(value, 'cas');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BlobAccessConfigError);
    expect((error as Error).message).toBe(message);
  });
});
