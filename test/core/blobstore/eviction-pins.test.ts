import { describe, expect, it, onTestFinished } from 'vitest';
import { BlobAccessMetrics, BlobPins, createBlobAccess, diskUsageOf, DiskBlobAccess, PinningBlobAccess } from '../../../src/core/blobstore/index.js';
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
