import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InputStampCache } from '../../src/loading/input-stamp-cache.js';

/** A clock an hour ahead: every stamp the test makes is well outside the racy window. */
const later = () => Date.now() + 3_600_000;
/** A clock at this moment: a file written just now is racily stamped. */
const now = () => Date.now();

describe('InputStampCache', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kiln-stamps-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Fingerprints by reading the file, counting the reads. */
  function reader(path: string) {
    const counter = { reads: 0 };
    const compute = () => {
      counter.reads++;
      return { fingerprint: readFileSync(path, 'utf8'), stampable: true };
    };
    return { counter, compute };
  }

  it('serves an unchanged input from its stamp, across runs, and reads it again once it changes', () => {
    const file = join(dir, 'BUILD');
    const store = join(dir, 'cache', 'stamps.json');
    writeFileSync(file, 'one');
    const { counter, compute } = reader(file);
    const first = new InputStampCache(store, later);
    expect(first.fingerprint('file:BUILD', file, compute)).toBe('one');
    first.flush();

    const second = new InputStampCache(store, later);
    expect(second.fingerprint('file:BUILD', file, compute)).toBe('one');
    expect(counter.reads).toBe(1);

    writeFileSync(file, 'two'); // same size: the change shows in mtime and ctime
    expect(second.fingerprint('file:BUILD', file, compute)).toBe('two');
    expect(counter.reads).toBe(2);
  });

  it('does not trust a stamp taken within the racy window of the last write', () => {
    const file = join(dir, 'BUILD');
    writeFileSync(file, 'one');
    const { counter, compute } = reader(file);
    const cache = new InputStampCache(undefined, now);
    cache.fingerprint('file:BUILD', file, compute);
    cache.fingerprint('file:BUILD', file, compute);
    expect(counter.reads).toBe(2);
  });

  it('always computes what the caller says cannot be stamped, and a missing input', () => {
    const file = join(dir, 'listing');
    writeFileSync(file, 'x');
    let computed = 0;
    const cache = new InputStampCache(undefined, later);
    const unstampable = () => ({ fingerprint: String(++computed), stampable: false });
    expect(cache.fingerprint('dir:x', file, unstampable)).toBe('1');
    expect(cache.fingerprint('dir:x', file, unstampable)).toBe('2');
    expect(cache.fingerprint('file:gone', join(dir, 'gone'), () => ({ fingerprint: '!', stampable: true }))).toBe('!');
  });

  it('starts empty from a torn or foreign cache file', () => {
    const file = join(dir, 'BUILD');
    const store = join(dir, 'stamps.json');
    writeFileSync(file, 'one');
    writeFileSync(store, '{"version": 1, "entries": [["file:BUILD", {"size": 3, "mtimeNs"');
    const { counter, compute } = reader(file);
    expect(new InputStampCache(store, later).fingerprint('file:BUILD', file, compute)).toBe('one');
    expect(counter.reads).toBe(1);
  });
});
