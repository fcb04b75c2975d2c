import { afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, NotFoundError, reapi } from '../../../src/core/index.js';
import {
  BlobAccessConfigError,
  CompletenessCheckingBlobAccess,
  createBlobAccess,
  DiskBlobAccess,
  ExistenceCachingBlobAccess,
  MemoryBlobAccess,
  parseBlobAccessConfig,
  VerifyingBlobAccess,
  type BlobAccessConfig,
} from '../../../src/core/blobstore/index.js';
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

  it('builds sharded and mirrored stores, and grpc ones through the connectRemote it is given', async () => {
    const remote = new MemoryBlobAccess({ maxBytes: 1000 });
    const asked: string[] = [];
    const store = await createBlobAccess(
      {
        kind: 'sharding',
        shards: [
          { name: 'one', backend: { kind: 'mirrored', a: { kind: 'memory', maxBytes: 1000 }, b: { kind: 'grpc', endpoint: 'grpc://node:1' } } },
          { name: 'two', weight: 2, backend: { kind: 'memory', maxBytes: 1000 } },
        ],
      },
      { connectRemote: async (config, where) => (asked.push(`${where} ${config.endpoint}`), remote) },
      'cas',
    );
    expect(asked).toEqual(['cas.shards[0].backend.b grpc://node:1']);
    const x = blob('sharded');
    await store.put(x.digest, x.data);
    expect((await store.get(x.digest)).toString()).toBe('sharded');
    await expect(createBlobAccess({ kind: 'grpc', endpoint: 'grpc://n:1' }, {}, 'cas')).rejects.toThrow(/^cas: "grpc" storage needs a gRPC client/);
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
    [null, 'cas: expected an object, got null'],
    [
      { kind: 'tape' },
      'cas.kind: expected one of "memory", "disk", "blocks", "verifying", "existence-caching", "completeness-checking", "checksumming", "grpc", "sharding", "mirrored", got "tape"',
    ],
    [{ kind: 'memory' }, 'cas.maxBytes: expected a positive integer, got nothing'],
    [{ kind: 'memory', maxBytes: -1 }, 'cas.maxBytes: expected a positive integer, got -1'],
    [{ kind: 'memory', maxBytes: 10, path: '/x' }, 'cas.path: unknown field (allowed: kind, maxBytes)'],
    [{ kind: 'disk', maxBytes: 10 }, 'cas.path: expected a non-empty string, got nothing'],
    [{ kind: 'disk', path: '/x', maxBytes: 10, keyspace: 'xyz' }, 'cas.keyspace: expected one of "cas", "ac", got "xyz"'],
    [{ kind: 'disk', path: '/x', maxBytes: 10, sync: 'yes' }, 'cas.sync: expected true or false, got "yes"'],
    [{ kind: 'verifying', backend: { kind: 'memory', maxBytes: 1.5 } }, 'cas.backend.maxBytes: expected a positive integer, got 1.5'],
    [{ kind: 'existence-caching', backend: { kind: 'memory', maxBytes: 1 } }, 'cas.ttlMs: expected a positive integer, got nothing'],
    [{ kind: 'completeness-checking' }, 'cas.backend: expected an object, got nothing'],
    [
      { kind: 'verifying', backend: { kind: 'blocks', path: '/x', maxBytes: 10, blockSizeBytes: 0 } },
      'cas.backend.blockSizeBytes: expected a positive integer, got 0',
    ],
    [{ kind: 'grpc' }, 'cas.endpoint: expected a non-empty string, got nothing'],
    [{ kind: 'grpc', endpoint: 'grpc://n:1', keyspace: 'x' }, 'cas.keyspace: expected one of "cas", "ac", got "x"'],
    [{ kind: 'grpc', endpoint: 'grpc://n:1', tls: { key: 'k.pem' } }, 'cas.tls: a client certificate needs its key, and a key its certificate'],
    [{ kind: 'grpc', endpoint: 'grpc://n:1', tls: { ca: '' } }, 'cas.tls.ca: expected a non-empty string, got ""'],
    [
      { kind: 'grpc', endpoint: 'grpc://n:1', token: 'x' },
      'cas.token: unknown field (allowed: kind, endpoint, instanceName, keyspace, tls, tokenFile, timeoutMs, retries)',
    ],
    [{ kind: 'sharding', shards: [] }, 'cas.shards: expected a non-empty array of {name, weight, backend}'],
    [
      { kind: 'sharding', shards: [{ name: 'a', weight: 0, backend: { kind: 'memory', maxBytes: 1 } }] },
      'cas.shards[0].weight: expected an integer from 1 to 4294967296, got 0',
    ],
    [
      {
        kind: 'sharding',
        shards: [
          { name: 'a', backend: { kind: 'memory', maxBytes: 1 } },
          { name: 'a', backend: { kind: 'memory', maxBytes: 1 } },
        ],
      },
      'cas.shards[1].name: shard name "a" is used twice (blobs hash against the names)',
    ],
    [{ kind: 'sharding', shards: [{ name: 'a', backend: { kind: 'grpc' } }] }, 'cas.shards[0].backend.endpoint: expected a non-empty string, got nothing'],
    [{ kind: 'mirrored', a: { kind: 'memory', maxBytes: 1 } }, 'cas.b: expected an object, got nothing'],
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
