import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CycleError,
  Evaluator,
  FileStore,
  SkyFamily,
  skyFunction,
  type PersistedEntry,
  type PersistentStore,
  type SkyFunction,
  type SkyFunctionEntry,
} from '../../src/skyframe/index.js';

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
const SUM = SkyFamily.ofStrings<number>('sum');

const numberCodec = { encode: (v: number) => Buffer.from(String(v)), decode: (d: Uint8Array) => Number(Buffer.from(d).toString()) };

function sumFunction(files: Map<string, string>, calls: string[]): SkyFunction<string, number> {
  return {
    compute(name, env) {
      calls.push(name);
      const text = files.get(name) ?? '';
      env.recordInput(`file:${name}`, text);
      let total = 0;
      for (const tok of text.split(' ').filter(Boolean)) total += /^\d+$/.test(tok) ? Number(tok) : env.get(SUM.key(tok));
      return total;
    },
    persist: numberCodec,
  };
}

function sumFunctions(files: Map<string, string>, calls: string[]): SkyFunctionEntry[] {
  return [skyFunction(SUM, sumFunction(files, calls))];
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
    expect(ev.evaluate(SUM.key('a'))).toBe(1 + 2 + 3 + 3);
    expect(ev.evaluate(SUM.key('a'))).toBe(9);
    expect(calls).toEqual(['a', 'b', 'c']);
    expect([...ev.inputsOf(SUM.key('a'))!.keys()].sort()).toEqual(['file:a', 'file:b', 'file:c']);
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
      ev.evaluate(SUM.key('a'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CycleError);
    expect((err as CycleError).path.map(String)).toEqual(['sum:b', 'sum:c', 'sum:b']);
    expect((err as CycleError).path.map((k) => k.argument)).toEqual(['b', 'c', 'b']);
    expect(() => ev.evaluate(SUM.key('a'))).toThrow(err as Error);
  });

  it('reuses persisted values while their inputs are unchanged', () => {
    const files = new Map([
      ['a', '1 b'],
      ['b', '2'],
    ]);
    const store = new MemoryStore();
    const oracle = (id: string) => files.get(id.slice(5)) ?? '';
    const first: string[] = [];
    new Evaluator(sumFunctions(files, first), store, oracle).evaluate(SUM.key('a'));
    expect(first).toEqual(['a', 'b']);

    const second: string[] = [];
    const ev2 = new Evaluator(sumFunctions(files, second), store, oracle);
    expect(ev2.evaluate(SUM.key('a'))).toBe(3);
    expect(second).toEqual([]);
    expect(ev2.stats).toEqual({ computed: 0, reusedFromStore: 2, recomputedUnchanged: 0 }); // a, and b which a's entry names

    files.set('b', '5'); // a dependency's input changed: b is computed again first, then a, whose entry names b
    const third: string[] = [];
    expect(new Evaluator(sumFunctions(files, third), store, oracle).evaluate(SUM.key('a'))).toBe(6);
    expect(third).toEqual(['b', 'a']);
  });
});

describe('Evaluator: change pruning', () => {
  /**
   * `digits:x` is the sorted digits of file x (so reordering them gives an equal value); `total:x`
   * sums `digits:x`. Both are persisted: total depends on digits by its value's fingerprint.
   */
  const DIGITS = SkyFamily.ofStrings<string>('digits');
  const TOTAL = SkyFamily.ofStrings<number>('total');
  const stringCodec = { encode: (v: string) => Buffer.from(v), decode: (d: Uint8Array) => Buffer.from(d).toString() };
  function functions(files: Map<string, string>, calls: string[]): SkyFunctionEntry[] {
    return [
      skyFunction(DIGITS, {
        compute(name, env) {
          calls.push(`digits:${name}`);
          const text = files.get(name) ?? '';
          env.recordInput(`file:${name}`, text);
          return [...text.replace(/\D/g, '')].sort().join('');
        },
        persist: stringCodec,
      }),
      skyFunction(TOTAL, {
        compute(name, env) {
          calls.push(`total:${name}`);
          return [...env.get(DIGITS.key(name))].reduce((n, d) => n + Number(d), 0);
        },
        persist: numberCodec,
      }),
    ];
  }

  it('keeps a dependent whose persisted dependency was computed again to an equal value', () => {
    const files = new Map([['a', '1 2 3']]);
    const store = new MemoryStore();
    const oracle = (id: string) => files.get(id.slice(5)) ?? '';
    new Evaluator(functions(files, []), store, oracle).evaluate(TOTAL.key('a'));
    expect(store.map.get('total:a')!.deps.map(([id]) => id)).toEqual(['digits:a']);
    expect(store.map.get('total:a')!.inputs).toEqual([]); // its file is digits' input, not its own

    files.set('a', '3 # a comment 2 1'); // the file changed, the digits did not
    const calls: string[] = [];
    const ev = new Evaluator(functions(files, calls), store, oracle);
    expect(ev.evaluate(TOTAL.key('a'))).toBe(6);
    expect(calls).toEqual(['digits:a']);
    expect(ev.stats).toEqual({ computed: 1, reusedFromStore: 1, recomputedUnchanged: 1 });
    // What it read, through the dependency, is still reported to trackInputs.
    expect([...ev.inputsOf(TOTAL.key('a'))!]).toEqual([['file:a', '3 # a comment 2 1']]);
  });

  it('computes a dependent again when its dependency changed value', () => {
    const files = new Map([['a', '1 2 3']]);
    const store = new MemoryStore();
    const oracle = (id: string) => files.get(id.slice(5)) ?? '';
    new Evaluator(functions(files, []), store, oracle).evaluate(TOTAL.key('a'));
    files.set('a', '1 2 4');
    const calls: string[] = [];
    const ev = new Evaluator(functions(files, calls), store, oracle);
    expect(ev.evaluate(TOTAL.key('a'))).toBe(7);
    expect(calls).toEqual(['digits:a', 'total:a']);
    expect(ev.stats.recomputedUnchanged).toBe(0);
    // And the next run reuses both.
    const again: string[] = [];
    expect(new Evaluator(functions(files, again), store, oracle).evaluate(TOTAL.key('a'))).toBe(7);
    expect(again).toEqual([]);
  });

  it('computes again an entry that names a key no function knows', () => {
    const files = new Map([['a', '5']]);
    const store = new MemoryStore();
    const oracle = (id: string) => files.get(id.slice(5)) ?? '';
    store.set('total:a', { inputs: [], deps: [['gone:x', 'fp']], data: Buffer.from('99') });
    const calls: string[] = [];
    expect(new Evaluator(functions(files, calls), store, oracle).evaluate(TOTAL.key('a'))).toBe(5);
    expect(calls).toEqual(['total:a', 'digits:a']);
  });

  it('refuses a key of a family it was not given, and two functions for one family', () => {
    const ev = new Evaluator(functions(new Map(), []));
    expect(() => ev.evaluate(SkyFamily.ofStrings<number>('other').key('x'))).toThrow('no function for key other:x');
    expect(() => new Evaluator([...functions(new Map(), []), ...functions(new Map(), [])])).toThrow('two functions for family digits');
    // A family of the same name but another identity is not the one registered.
    expect(() => ev.evaluate(SkyFamily.ofStrings<number>('total').key('x'))).toThrow('no function for key total:x');
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
    new Evaluator(sumFunctions(files, []), store, oracle).evaluate(SUM.key('a'));

    const ev = new Evaluator(sumFunctions(files, []), store, oracle);
    ev.evaluate(SUM.key('c')); // before tracking: not collected
    const tracked = ev.trackInputs(() => ev.evaluate(SUM.key('a')) + ev.evaluate(SUM.key('c')));
    expect(tracked.value).toBe(6);
    expect([...tracked.inputs]).toEqual([
      ['file:a', '1 b'],
      ['file:b', '2'],
      ['file:c', '3'],
    ]);
    expect(ev.stats).toEqual({ computed: 1, reusedFromStore: 2, recomputedUnchanged: 0 }); // c computed before tracking, a and b reused
    expect(() => ev.trackInputs(() => ev.trackInputs(() => 0))).toThrow('not reentrant');
  });
});

describe('Evaluator and a store it cannot use', () => {
  it('computes a stored value again when it does not decode, and does not store one that does not encode', () => {
    const files = new Map([['a', '1']]);
    const store = new MemoryStore();
    const oracle = (id: string) => files.get(id.slice(5)) ?? '';
    store.set('sum:a', { inputs: [['file:a', '1']], deps: [], data: Buffer.from('garbage') });
    const calls: string[] = [];
    const fn = sumFunction(files, calls);
    const rejecting = [
      skyFunction(SUM, {
        compute: fn.compute,
        persist: {
          encode: () => {
            throw new Error('no');
          },
          decode: () => {
            throw new Error('bad record');
          },
        },
      }),
    ];
    const ev = new Evaluator(rejecting, store, oracle);
    expect(ev.evaluate(SUM.key('a'))).toBe(1);
    expect(calls).toEqual(['a']);
    expect(ev.stats).toEqual({ computed: 1, reusedFromStore: 0, recomputedUnchanged: 0 });
    expect(Buffer.from(store.map.get('sum:a')!.data).toString()).toBe('garbage');
  });
});

describe('FileStore', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  const data = (s: string) => Buffer.from(s);
  const text = (e: PersistedEntry | undefined) => (e ? { inputs: e.inputs, deps: e.deps, data: Buffer.from(e.data).toString() } : undefined);
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
      deps: [['sum:b', 'fp-b']],
      data: data('{"n":1}'),
    });
    s1.flush();
    expect(text(new FileStore(path, 'v1').get('k'))).toEqual({
      inputs: [
        ['file:a', 'x'],
        ['dir:d', 'é'],
      ],
      deps: [['sum:b', 'fp-b']],
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
      deps: [],
      data: data('A1'),
    });
    s1.set('b', { inputs: [['file:shared', 's']], deps: [], data: data('B1') });
    s1.flush();
    const s2 = new FileStore(path, 'v1');
    s2.set('b', { inputs: [['file:b', '2']], deps: [['sum:a', 'x']], data: data('B2') });
    s2.set('c', { inputs: [], deps: [], data: data('') });
    s2.flush();
    const s3 = new FileStore(path, 'v1');
    expect(text(s3.get('a'))).toEqual({
      inputs: [
        ['file:a', '1'],
        ['file:shared', 's'],
      ],
      deps: [],
      data: 'A1',
    });
    expect(text(s3.get('b'))).toEqual({ inputs: [['file:b', '2']], deps: [['sum:a', 'x']], data: 'B2' });
    expect(text(s3.get('c'))).toEqual({ inputs: [], deps: [], data: '' });
    expect(s3.get('d')).toBeUndefined();
  });

  it('drops an entry nobody used for retainRuns writes, keeps one that is read, and refreshes it before it ages out', () => {
    const path = storePath();
    const open = () => new FileStore(path, 'v1', 4);
    const first = open();
    first.set('read', { inputs: [], deps: [], data: data('r') });
    first.set('idle', { inputs: [], deps: [], data: data('i') });
    first.flush();
    for (let run = 2; run <= 8; run++) {
      const s = open();
      expect(text(s.get('read'))?.data).toBe('r');
      s.set(`churn${run}`, { inputs: [], deps: [], data: data(String(run)) });
      s.flush();
    }
    const last = open();
    expect(text(last.get('read'))?.data).toBe('r');
    expect(last.get('idle')).toBeUndefined(); // unused for more than 4 writes
    expect(last.get('churn2')).toBeUndefined();
    expect(text(last.get('churn8'))?.data).toBe('8');
    // Only read, never set: the store is rewritten once the entry is half the retention old.
    const path2 = storePath();
    const a = new FileStore(path2, 'v1', 4);
    a.set('k', { inputs: [], deps: [], data: data('k') });
    a.flush();
    for (let i = 0; i < 10; i++) {
      const b = new FileStore(path2, 'v1', 4);
      expect(text(b.get('k'))?.data).toBe('k');
      b.flush();
    }
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
    s1.set('k', { inputs: [['file:a', 'x']], deps: [], data: data('value') });
    s1.flush();
    const good = readFileSync(path);
    const flipped = Buffer.from(good);
    flipped[flipped.length - 2]! ^= 0x10;
    for (const bad of [good.subarray(0, good.length - 3), flipped, Buffer.from('{"version":"v1","entries":[]}'), Buffer.alloc(0)]) {
      writeFileSync(path, bad);
      const s = new FileStore(path, 'v1');
      expect(s.get('k')).toBeUndefined();
      s.set('j', { inputs: [], deps: [], data: data('j') });
      s.flush();
      expect(text(new FileStore(path, 'v1').get('j'))).toEqual({ inputs: [], deps: [], data: 'j' });
    }
  });
});
