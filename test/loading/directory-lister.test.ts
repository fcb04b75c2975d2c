import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirectoryLister, type ListingStore } from '../../src/loading/directory-lister.js';
import { InputStampCache } from '../../src/loading/input-stamp-cache.js';
import { Workspace } from '../../src/loading/workspace.js';
import { workspaceFixture } from './fixture.js';

/** A clock an hour ahead: every stamp the test makes is well outside the racy window. */
const later = () => (BigInt(Date.now()) + 3_600_000n) * 1_000_000n;

/** One run's workspace over the stamps file `store`, counting the directories it really read. */
function run(root: string, store: string) {
  const stamps = new InputStampCache(store, later);
  const reads: string[] = [];
  const counting: ListingStore = {
    listing: (absDir, read) =>
      stamps.listing(absDir, () => {
        reads.push(absDir.slice(root.length + 1));
        return read();
      }),
  };
  const lister = new DirectoryLister();
  lister.useStore(counting);
  return { ws: new Workspace(root, '', lister), reads, flush: () => stamps.flush() };
}

describe('DirectoryLister with a listing store', () => {
  it('walks //... from recorded listings while directories keep their stamps, and sees what was added or removed', () => {
    const root = workspaceFixture({ WORKSPACE: '', 'a/BUILD': '', 'a/src/x.txt': '', 'b/c/BUILD': '', 'gone/BUILD': '' });
    const store = join(root, '..', `${root.split('/').pop()}-stamps.bin`);

    const first = run(root, store);
    expect(first.ws.packagesUnder('')).toEqual(['a', 'b/c', 'gone']);
    expect(first.reads.length).toBe(6);
    first.flush();

    const second = run(root, store);
    expect(second.ws.packagesUnder('')).toEqual(['a', 'b/c', 'gone']);
    expect(second.reads).toEqual([]);
    second.flush();

    // A new package directory, a BUILD file added to a plain directory, a package removed.
    mkdirSync(join(root, 'b/c/d'));
    writeFileSync(join(root, 'b/c/d/BUILD'), '');
    writeFileSync(join(root, 'a/src/BUILD'), '');
    rmSync(join(root, 'gone'), { recursive: true });
    const third = run(root, store);
    expect(third.ws.packagesUnder('')).toEqual(['a', 'a/src', 'b/c', 'b/c/d']);
    expect(third.reads.sort()).toEqual(['', 'a/src', 'b/c', 'b/c/d']);
    rmSync(store, { force: true });
  });

  it('reads a listing with a symlink every run (its target may change without touching the directory)', () => {
    const root = workspaceFixture({ WORKSPACE: '', 'a/BUILD': '', 'target/f.txt': '' });
    symlinkSync(join(root, 'target'), join(root, 'a/link'));
    const store = join(root, '..', `${root.split('/').pop()}-stamps.bin`);
    const first = run(root, store);
    expect(first.ws.lister.list(join(root, 'a'))?.map((e) => e.name)).toEqual(['BUILD', 'link']);
    first.flush();
    const second = run(root, store);
    second.ws.lister.list(join(root, 'a'));
    expect(second.reads).toEqual(['a']);
    rmSync(store, { force: true });
  });
});
