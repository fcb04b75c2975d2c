import { describe, expect, it, onTestFinished } from 'vitest';
import {
  BlobAccessMetrics,
  BlobPins,
  BlockBlobAccess,
  createBlobAccess,
  diskUsageOf,
  DiskBlobAccess,
  PinningBlobAccess,
} from '../../../src/core/blobstore/index.js';
import { until } from '../../setup/until.js';
import { newMetricsRegistry } from '../../../src/core/metrics/index.js';
import { blobs, FakeClock, tempDir } from './fixtures.js';

async function root(): Promise<string> {
  const dir = await tempDir();
  onTestFinished(dir.cleanup);
  return dir.path;
}

describe('bounded disk storage with pins', () => {
  it('evicts least recently used blobs to the budget, never a pinned one, until its pin ends', async () => {
    const path = await root();
    const clock = new FakeClock(1_000);
    const pins = new BlobPins(clock, 60_000);
    const [a, b, c, d, e] = blobs(5, 3000);
    const budget = 3 * diskUsageOf(3000);
    const store = await DiskBlobAccess.open({ path, maxBytes: budget, pins });
    const pinned = new PinningBlobAccess(store, pins);
    // a is what a client was told exists (FindMissingBlobs said present); b and c are stored unpinned.
    await store.put(a!.digest, a!.data);
    expect(await pinned.findMissing([a!.digest])).toEqual([]);
    await store.put(b!.digest, b!.data);
    await store.put(c!.digest, c!.data);
    // Over budget: b (the oldest unpinned) goes, a stays although it is the least recently used.
    await store.put(d!.digest, d!.data);
    expect(await store.findMissing([a!.digest, b!.digest, c!.digest, d!.digest])).toEqual([b!.digest]);
    expect(store.usage.bytes).toBeLessThanOrEqual(budget);
    // Once the pin has ended, a is evicted like any other.
    clock.advance(60_001);
    await store.put(e!.digest, e!.data);
    expect(await store.findMissing([a!.digest])).toEqual([a!.digest]);
    expect(store.usage.bytes).toBeLessThanOrEqual(budget);
  });

  it('keeps written (pinned) blobs even over budget, and evicts them to the budget once their pins end', async () => {
    const path = await root();
    const clock = new FakeClock(0);
    const pins = new BlobPins(clock, 1_000);
    const disk = await DiskBlobAccess.open({ path, maxBytes: 2 * diskUsageOf(100), pins });
    const store = new PinningBlobAccess(disk, pins);
    // Written blobs are pinned (inputs uploaded for an action about to run, an executor's outputs).
    const written = blobs(4, 100, 'p');
    for (const w of written) await store.put(w.digest, w.data);
    expect(await disk.findMissing(written.map((w) => w.digest))).toEqual([]);
    expect(disk.usage.bytes).toBe(4 * diskUsageOf(100));
    clock.advance(1_001);
    const [next] = blobs(1, 100, 'q');
    await store.put(next!.digest, next!.data);
    expect(disk.usage.bytes).toBeLessThanOrEqual(2 * diskUsageOf(100));
    expect(await disk.findMissing([next!.digest])).toEqual([]);
    expect(await disk.findMissing(written.map((w) => w.digest))).toHaveLength(3);
  });

  it('reports evictions and the stored bytes in the metrics', async () => {
    const path = await root();
    const registry = newMetricsRegistry({ processMetrics: false });
    const metrics = BlobAccessMetrics.of(registry);
    const store = await createBlobAccess({ kind: 'disk', path, maxBytes: 2 * diskUsageOf(500) }, { metrics });
    for (const w of blobs(5, 500)) await store.put(w.digest, w.data);
    const json = await registry.getMetricsAsJSON();
    const value = (name: string) => json.find((m) => m.name === name)?.values.find((v) => v.labels['backend'] === 'disk')?.value;
    expect(value('kiln_blobstore_evictions_total')).toBe(3);
    expect(value('kiln_blobstore_evicted_bytes_total')).toBe(3 * diskUsageOf(500));
    expect(value('kiln_blobstore_stored_bytes')).toBe(2 * diskUsageOf(500));
    expect(value('kiln_blobstore_stored_blobs')).toBe(2);
  });
});

describe('bounded block storage with pins', () => {
  const BLOCK = 8 * 1024;
  const BUDGET = 6 * BLOCK;

  /** A block store of 8 KiB blocks (two 3,000-byte blobs each) under a 48 KiB budget, with pins of `ttlMs`. */
  async function blockStore(ttlMs: number) {
    const clock = new FakeClock(0);
    const pins = new BlobPins(clock, ttlMs);
    let evicted = 0;
    const store = await BlockBlobAccess.open({ path: await root(), maxBytes: BUDGET, blockSizeBytes: BLOCK, pins, onEvict: (n) => (evicted += n) });
    onTestFinished(() => store.close());
    return { clock, store, pinned: new PinningBlobAccess(store, pins), evicted: () => evicted };
  }

  it("fills the budget while an action's inputs are pinned: they are copied forward, the oldest unpinned blobs go, the budget holds", async () => {
    const { store, pinned, evicted } = await blockStore(60_000);
    // The inputs of a queued action, uploaded (so pinned), each sharing its block with an unpinned blob.
    const inputs = blobs(4, 3000, 'input');
    const fillers = blobs(4, 3000, 'filler');
    for (let i = 0; i < 4; i++) {
      await pinned.put(inputs[i]!.digest, inputs[i]!.data);
      await store.put(fillers[i]!.digest, fillers[i]!.data);
    }
    // Other builds write four times the budget.
    for (const b of blobs(64, 3000, 'flood')) await store.put(b.digest, b.data);
    await until(() => store.usage.bytes <= BUDGET, 'the store back within its budget');
    expect(evicted()).toBeGreaterThan(0);
    expect(await store.findMissing(inputs.map((b) => b.digest))).toEqual([]);
    for (const input of inputs) expect((await store.get(input.digest)).equals(input.data)).toBe(true);
    expect(await store.findMissing(fillers.map((b) => b.digest))).toEqual(fillers.map((b) => b.digest));
  });

  it('evicts what was pinned like anything else once the pins end', async () => {
    const { clock, store, pinned } = await blockStore(1_000);
    const inputs = blobs(2, 3000, 'input');
    for (const input of inputs) await pinned.put(input.digest, input.data);
    clock.advance(1_001);
    for (const b of blobs(64, 3000, 'flood')) await store.put(b.digest, b.data);
    await until(() => store.usage.bytes <= BUDGET, 'the store back within its budget');
    expect(await store.findMissing(inputs.map((b) => b.digest))).toEqual(inputs.map((b) => b.digest));
  });

  it('stays over its budget rather than evict blocks that hold only pinned blobs', async () => {
    const { store, pinned } = await blockStore(60_000);
    const written = blobs(24, 3000, 'pinned');
    for (const b of written) await pinned.put(b.digest, b.data);
    expect(store.usage.bytes).toBeGreaterThan(BUDGET);
    expect(await store.findMissing(written.map((b) => b.digest))).toEqual([]);
  });
});
