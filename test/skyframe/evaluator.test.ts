import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CycleError, Evaluator, FileStore, type PersistedEntry, type PersistentStore, type SkyFunction } from '../../src/skyframe/index.js';

class MemoryStore implements PersistentStore {
  readonly map = new Map<string, PersistedEntry>();
  get(k: string) {
    return this.map.get(k);
  }
  set(k: string, e: PersistedEntry) {
    this.map.set(k, e);
  }
}

/** A toy graph: `sum:x` adds the numbers in file x and the sums of the files it names. */
function sumFunctions(files: Map<string, string>, calls: string[]): Map<string, SkyFunction<number>> {
  return new Map([
    [
      'sum',
      {
        compute(key, env) {
          const name = key.slice(4);
          calls.push(name);
          const text = files.get(name) ?? '';
          env.recordInput(`file:${name}`, text);
          let total = 0;
          for (const tok of text.split(' ').filter(Boolean)) total += /^\d+$/.test(tok) ? Number(tok) : env.get<number>(`sum:${tok}`);
          return total;
        },
        persist: { encode: (v: number) => Buffer.from(String(v)), decode: (d: Uint8Array) => Number(Buffer.from(d).toString()) },
      },
    ],
  ]);
}

describe('Evaluator', () => {
  it('memoises values within a run', () => {
    const calls: string[] = [];
    const files = new Map([
      ['a', '1 b c'],
      ['b', '2 c'],
      ['c', '3'],
    ]);
    const ev = new Evaluator(sumFunctions(files, calls));
    expect(ev.evaluate('sum:a')).toBe(1 + 2 + 3 + 3);
    expect(ev.evaluate('sum:a')).toBe(9);
    expect(calls).toEqual(['a', 'b', 'c']);
    expect([...ev.inputsOf('sum:a')!.keys()].sort()).toEqual(['file:a', 'file:b', 'file:c']);
  });

  it('reports a cycle with its path, and memoises the error', () => {
    const files = new Map([
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'b'],
    ]);
    const ev = new Evaluator(sumFunctions(files, []));
    let err: unknown;
    try {
      ev.evaluate('sum:a');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CycleError);
    expect((err as CycleError).path).toEqual(['sum:b', 'sum:c', 'sum:b']);
    expect(() => ev.evaluate('sum:a')).toThrow(err as Error);
  });

  it('reuses persisted values while their inputs are unchanged', () => {
    const files = new Map([
      ['a', '1 b'],
      ['b', '2'],
    ]);
    const store = new MemoryStore();
    const oracle = (id: string) => files.get(id.slice(5)) ?? '';
    const first: string[] = [];
    new Evaluator(sumFunctions(files, first), store, oracle).evaluate('sum:a');
    expect(first).toEqual(['a', 'b']);

    const second: string[] = [];
    const ev2 = new Evaluator(sumFunctions(files, second), store, oracle);
    expect(ev2.evaluate('sum:a')).toBe(3);
    expect(second).toEqual([]);
    expect(ev2.stats).toEqual({ computed: 0, reusedFromStore: 1 });

    files.set('b', '5'); // a transitive input changed: a and b are computed again
    const third: string[] = [];
    expect(new Evaluator(sumFunctions(files, third), store, oracle).evaluate('sum:a')).toBe(6);
    expect(third).toEqual(['a', 'b']);
  });
});

describe('Evaluator.trackInputs', () => {
  it('collects the inputs of every key evaluated inside, memoised or reused from the store', () => {
    const files = new Map([
      ['a', '1 b'],
      ['b', '2'],
      ['c', '3'],
    ]);
    const store = new MemoryStore();
    const oracle = (id: string) => files.get(id.slice(5)) ?? '';
    new Evaluator(sumFunctions(files, []), store, oracle).evaluate('sum:a');

    const ev = new Evaluator(sumFunctions(files, []), store, oracle);
    ev.evaluate('sum:c'); // before tracking: not collected
    const tracked = ev.trackInputs(() => ev.evaluate<number>('sum:a') + ev.evaluate<number>('sum:c'));
    expect(tracked.value).toBe(6);
    expect([...tracked.inputs]).toEqual([
      ['file:a', '1 b'],
      ['file:b', '2'],
      ['file:c', '3'],
    ]);
    expect(ev.stats).toEqual({ computed: 1, reusedFromStore: 1 }); // c computed before tracking, a reused
    expect(() => ev.trackInputs(() => ev.trackInputs(() => 0))).toThrow('not reentrant');
  });
});

describe('Evaluator and a store it cannot use', () => {
  it('computes a stored value again when it does not decode, and does not store one that does not encode', () => {
    const files = new Map([['a', '1']]);
    const store = new MemoryStore();
    const oracle = (id: string) => files.get(id.slice(5)) ?? '';
    store.set('sum:a', { inputs: [['file:a', '1']], data: Buffer.from('garbage') });
    const calls: string[] = [];
    const strict = sumFunctions(files, calls);
    const fn = strict.get('sum')!;
    const rejecting = new Map([
      [
        'sum',
        {
          compute: fn.compute,
          persist: {
            encode: () => {
              throw new Error('no');
            },
            decode: () => {
              throw new Error('bad record');
            },
          },
        },
      ],
    ]);
    const ev = new Evaluator(rejecting, store, oracle);
    expect(ev.evaluate('sum:a')).toBe(1);
    expect(calls).toEqual(['a']);
    expect(ev.stats).toEqual({ computed: 1, reusedFromStore: 0 });
    expect(Buffer.from(store.map.get('sum:a')!.data).toString()).toBe('garbage');
  });
});

describe('FileStore', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  const data = (s: string) => Buffer.from(s);
  const text = (e: PersistedEntry | undefined) => (e ? { inputs: e.inputs, data: Buffer.from(e.data).toString() } : undefined);
  function storePath(): string {
    const dir = mkdtempSync(join(tmpdir(), 'kiln-sky-'));
    dirs.push(dir);
    return join(dir, 'sub', 'cache.bin');
  }

  it('round-trips entries through one file and ignores another version', () => {
    const path = storePath();
    const s1 = new FileStore(path, 'v1');
    s1.set('k', {
      inputs: [
        ['file:a', 'x'],
        ['dir:d', 'é'],
      ],
      data: data('{"n":1}'),
    });
    s1.flush();
    expect(text(new FileStore(path, 'v1').get('k'))).toEqual({
      inputs: [
        ['file:a', 'x'],
        ['dir:d', 'é'],
      ],
      data: '{"n":1}',
    });
    expect(new FileStore(path, 'v2').get('k')).toBeUndefined();
  });

  it('keeps the entries it read when it writes, the ones set in this run winning', () => {
    const path = storePath();
    const s1 = new FileStore(path, 'v1');
    s1.set('a', {
      inputs: [
        ['file:a', '1'],
        ['file:shared', 's'],
      ],
      data: data('A1'),
    });
    s1.set('b', { inputs: [['file:shared', 's']], data: data('B1') });
    s1.flush();
    const s2 = new FileStore(path, 'v1');
    s2.set('b', { inputs: [['file:b', '2']], data: data('B2') });
    s2.set('c', { inputs: [], data: data('') });
    s2.flush();
    const s3 = new FileStore(path, 'v1');
    expect(text(s3.get('a'))).toEqual({
      inputs: [
        ['file:a', '1'],
        ['file:shared', 's'],
      ],
      data: 'A1',
    });
    expect(text(s3.get('b'))).toEqual({ inputs: [['file:b', '2']], data: 'B2' });
    expect(text(s3.get('c'))).toEqual({ inputs: [], data: '' });
    expect(s3.get('d')).toBeUndefined();
  });

  it('writes nothing when nothing was set', () => {
    const path = storePath();
    const s = new FileStore(path, 'v1');
    expect(s.get('k')).toBeUndefined();
    s.flush();
    expect(existsSync(path)).toBe(false);
  });

  it('reads a truncated, bit-flipped or foreign file as an empty store, and replaces it on the next write', () => {
    const path = storePath();
    const s1 = new FileStore(path, 'v1');
    s1.set('k', { inputs: [['file:a', 'x']], data: data('value') });
    s1.flush();
    const good = readFileSync(path);
    const flipped = Buffer.from(good);
    flipped[flipped.length - 2]! ^= 0x10;
    for (const bad of [good.subarray(0, good.length - 3), flipped, Buffer.from('{"version":"v1","entries":[]}'), Buffer.alloc(0)]) {
      writeFileSync(path, bad);
      const s = new FileStore(path, 'v1');
      expect(s.get('k')).toBeUndefined();
      s.set('j', { inputs: [], data: data('j') });
      s.flush();
      expect(text(new FileStore(path, 'v1').get('j'))).toEqual({ inputs: [], data: 'j' });
    }
  });
});
