import { describe, expect, it } from 'vitest';
import { computeActionKey, type ActionKey } from '../../src/actions/index.js';
import type { CacheLookup, CacheRequest, SpawnCache, SpawnResult } from '../../src/exec/spawn-cache.js';
import { SpawnCacheChain } from '../../src/exec/spawn-cache-chain.js';
import { genrule } from './fixtures.js';

const action = genrule('//p:g', { outs: ['o.txt'], cmd: 'touch $@' });
const outputs = [{ path: 'bazel-out/k8-fastbuild/bin/p/o.txt', digest: { hash: 'a'.repeat(64), sizeBytes: 1 }, isExecutable: false }];

/** A cache that answers as told and records what was asked and stored. */
class RecordingCache implements SpawnCache {
  readonly asked: string[] = [];
  readonly stored: SpawnResult[] = [];
  constructor(
    private readonly name: string,
    private readonly answer: 'hit' | 'miss' | 'failing-store',
  ) {}
  async lookup(request: CacheRequest): Promise<CacheLookup> {
    this.asked.push(request.localKey);
    if (this.answer === 'hit') return { kind: 'hit', outputs, processKind: 'disk cache hit' };
    return {
      kind: 'miss',
      store: async (result) => {
        if (this.answer === 'failing-store') throw new Error(`${this.name} is read-only`);
        this.stored.push(result);
      },
    };
  }
}

function request(): CacheRequest & { keysComputed: () => number } {
  let computed = 0;
  let key: ActionKey | undefined;
  return {
    action,
    env: {},
    inputs: [],
    localKey: 'k',
    remoteKey: () => {
      computed++;
      return (key ??= computeActionKey(action, { env: {}, inputs: [] }));
    },
    keysComputed: () => computed,
  };
}

describe('SpawnCacheChain', () => {
  it('answers with the first hit, stores it in the caches before it, and never asks the caches after it', async () => {
    const local = new RecordingCache('local', 'miss');
    const disk = new RecordingCache('disk', 'hit');
    const remote = new RecordingCache('remote', 'miss');
    const found = await new SpawnCacheChain([local, disk, remote], () => {}).lookup(request());
    expect(found).toMatchObject({ kind: 'hit', processKind: 'disk cache hit', outputs });
    expect(local.stored).toEqual([{ outputs, ranAs: 'disk cache hit' }]);
    expect(remote.asked).toEqual([]);
  });

  it('when every cache misses, the handle stores the run in each, in order', async () => {
    const caches = [new RecordingCache('local', 'miss'), new RecordingCache('disk', 'miss')];
    const found = await new SpawnCacheChain(caches, () => {}).lookup(request());
    expect(found.kind).toBe('miss');
    if (found.kind !== 'miss') return;
    await found.store({ outputs, ranAs: 'local' });
    for (const c of caches) expect(c.stored).toEqual([{ outputs, ranAs: 'local' }]);
  });

  it('turns a failed store into a warning and still stores in the other caches', async () => {
    const warnings: string[] = [];
    const broken = new RecordingCache('disk', 'failing-store');
    const after = new RecordingCache('remote', 'miss');
    const found = await new SpawnCacheChain([broken, after], (m) => warnings.push(m)).lookup(request());
    if (found.kind !== 'miss') throw new Error('expected a miss');
    await found.store({ outputs, ranAs: 'local' });
    expect(warnings).toEqual(['disk is read-only']);
    expect(after.stored).toHaveLength(1);
  });

  it('leaves the REAPI key uncomputed when no cache asks for it', async () => {
    const req = request();
    await new SpawnCacheChain([new RecordingCache('local', 'hit')], () => {}).lookup(req);
    expect(req.keysComputed()).toBe(0);
  });
});
