import { describe, expect, it } from 'vitest';
import { digestOf, NotFoundError } from '../../../src/core/index.js';
import { MemoryBlobAccess, RendezvousHashing, ShardingBlobAccess } from '../../../src/core/blobstore/index.js';
import { blob } from './fixtures.js';

const KEYS = Array.from({ length: 20_000 }, (_, i) => digestOf(Buffer.from(`key ${i}`)).hash);

function assignment(hashing: RendezvousHashing, names: readonly string[]): string[] {
  return KEYS.map((k) => names[hashing.memberOf(k)]!);
}

function shares(assigned: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of assigned) counts[name] = (counts[name] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).map(([name, n]) => [name, n / assigned.length]));
}

describe('rendezvous hashing', () => {
  it('spreads keys evenly over equal weights and in proportion to unequal ones', () => {
    const even = ['n1', 'n2', 'n3', 'n4'];
    for (const share of Object.values(shares(assignment(new RendezvousHashing(even.map((name) => ({ name, weight: 1 }))), even)))) {
      expect(share).toBeGreaterThan(0.23);
      expect(share).toBeLessThan(0.27);
    }
    const weighted = [
      { name: 'small', weight: 1 },
      { name: 'large', weight: 3 },
    ];
    const s = shares(assignment(new RendezvousHashing(weighted), ['small', 'large']));
    expect(s['large']).toBeGreaterThan(0.72);
    expect(s['large']).toBeLessThan(0.78);
  });

  it('moves only the keys the added member wins, about 1/N of them; removing it moves them back', () => {
    const four = ['n1', 'n2', 'n3', 'n4'];
    const five = [...four, 'n5'];
    const before = assignment(new RendezvousHashing(four.map((name) => ({ name, weight: 1 }))), four);
    const after = assignment(new RendezvousHashing(five.map((name) => ({ name, weight: 1 }))), five);
    const moved = KEYS.map((_, i) => i).filter((i) => before[i] !== after[i]);
    expect(moved.every((i) => after[i] === 'n5')).toBe(true);
    expect(moved.length / KEYS.length).toBeGreaterThan(0.18);
    expect(moved.length / KEYS.length).toBeLessThan(0.22);
  });

  it('does not depend on the order of the members', () => {
    const names = ['a', 'b', 'c'];
    const reversed = [...names].reverse();
    const forward = assignment(new RendezvousHashing(names.map((name) => ({ name, weight: 2 }))), names);
    const backward = assignment(new RendezvousHashing(reversed.map((name) => ({ name, weight: 2 }))), reversed);
    expect(backward).toEqual(forward);
  });
});

describe('ShardingBlobAccess', () => {
  const make = () => {
    const stores = ['s1', 's2', 's3'].map((name) => ({ name, weight: 1, backend: new MemoryBlobAccess({ maxBytes: 1 << 20 }) }));
    return { stores, sharded: new ShardingBlobAccess(stores) };
  };

  it('keeps each blob on the one shard its digest picks, and asks each shard about its own', async () => {
    const { stores, sharded } = make();
    const all = Array.from({ length: 60 }, (_, i) => blob(`blob ${i}`));
    for (const b of all) await sharded.put(b.digest, b.data);
    for (const b of all) {
      const home = sharded.shardOf(b.digest);
      for (const s of stores) expect((await s.backend.findMissing([b.digest])).length).toBe(s === home ? 0 : 1);
      expect((await sharded.get(b.digest)).equals(b.data)).toBe(true);
    }
    expect(new Set(all.map((b) => sharded.shardOf(b.digest).name)).size).toBe(3);
    const absent = blob('never stored');
    expect(await sharded.findMissing([...all.map((b) => b.digest), absent.digest])).toEqual([absent.digest]);
  });

  it('names the shard in a failure and keeps its class', async () => {
    const { sharded } = make();
    const absent = blob('absent');
    const error = await sharded.get(absent.digest).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as Error).message).toContain(`shard "${sharded.shardOf(absent.digest).name}"`);
  });
});
