import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeTree, InvalidTreeError, MAX_TREE_DEPTH } from '../../src/actions/index.js';
import { digestOf, reapi } from '../../src/core/index.js';

const digest = (content: string) => digestOf(Buffer.from(content));
const dirDigest = (d: reapi.DirectoryInit) => digestOf(Buffer.from(reapi.Directory.encode(d)));
const tree = (root: reapi.DirectoryInit, children: reapi.DirectoryInit[] = []) => reapi.Tree.decode(reapi.Tree.encode({ root, children }));
const decode = (root: reapi.DirectoryInit, children: reapi.DirectoryInit[] = []) => decodeTree(tree(root, children), "output directory 'out/t'");

describe('decodeTree', () => {
  it('expands a tree whose directories share a child, each path once', () => {
    const leaf: reapi.DirectoryInit = { files: [{ name: 'f', digest: digest('x') }], symlinks: [{ name: 'up', target: '../a/f' }] };
    const contents = decode(
      {
        directories: [
          { name: 'a', digest: dirDigest(leaf) },
          { name: 'b', digest: dirDigest(leaf) },
        ],
      },
      [leaf],
    );
    expect(contents.files.map((f) => f.path)).toEqual(['a/f', 'b/f']);
    expect(contents.directories).toEqual(['a', 'b']);
    expect(contents.symlinks).toEqual([
      { path: 'a/up', target: '../a/f' },
      { path: 'b/up', target: '../a/f' },
    ]);
  });

  it.each([
    [
      'two files of one name',
      {
        files: [
          { name: 'x', digest: digest('1') },
          { name: 'x', digest: digest('2') },
        ],
      },
      /holds two entries named 'x'/,
    ],
    [
      'a file and a directory of one name',
      { files: [{ name: 'x', digest: digest('1') }], directories: [{ name: 'x', digest: dirDigest({}) }] },
      /holds two entries named 'x'/,
    ],
    [
      'a symlink and a directory of one name',
      { symlinks: [{ name: 'x', target: 'y' }], directories: [{ name: 'x', digest: dirDigest({}) }] },
      /holds two entries named 'x'/,
    ],
    ['a name that climbs', { files: [{ name: '..', digest: digest('1') }] }, /holds an entry named '\.\.'/],
    ['a name with a slash', { files: [{ name: 'a/b', digest: digest('1') }] }, /holds an entry named 'a\/b'/],
    ['an absolute symlink', { symlinks: [{ name: 'l', target: '/etc/passwd' }] }, /symlink 'l' is an absolute symlink/],
    ['a symlink leaving the tree', { symlinks: [{ name: 'l', target: '../x' }] }, /symlink 'l' points to '..\/x', outside the tree artifact/],
    ['a missing child', { directories: [{ name: 'gone', digest: dirDigest({ files: [{ name: 'f', digest: digest('1') }] }) }] }, /lacks the directory 'gone'/],
    ['a malformed digest', { files: [{ name: 'f', digest: { hash: 'nope', sizeBytes: 1 } }] }, /hash must be 64 lowercase hex/],
  ] as [string, reapi.DirectoryInit, RegExp][])('refuses %s', (_, root, message) => {
    expect(() => decode(root, [{}])).toThrow(InvalidTreeError);
    expect(() => decode(root, [{}])).toThrow(message);
  });

  it('refuses symlinks that together leave the tree, and follows chains that stay inside', () => {
    // sub/up -> .. is the root; top -> sub/up/.. climbs from the root, which the lexical check alone misses.
    const sub: reapi.DirectoryInit = { symlinks: [{ name: 'up', target: '..' }] };
    const root = { directories: [{ name: 'sub', digest: dirDigest(sub) }], symlinks: [{ name: 'top', target: 'sub/up/..' }] };
    expect(() => decode(root, [sub])).toThrow(/symlink 'top' points to 'sub\/up\/..', which leaves the tree artifact through its other symlinks/);
    // A chain that stays inside: a -> b/c, b -> sub, sub/c -> ../sub.
    const sub2: reapi.DirectoryInit = { symlinks: [{ name: 'c', target: '../sub' }] };
    const inside = {
      directories: [{ name: 'sub', digest: dirDigest(sub2) }],
      symlinks: [
        { name: 'a', target: 'b/c' },
        { name: 'b', target: 'sub' },
      ],
    };
    expect(decode(inside, [sub2]).symlinks.map((l) => l.path)).toEqual(['a', 'b', 'sub/c']);
    const loop = {
      symlinks: [
        { name: 'a', target: 'b/x' },
        { name: 'b', target: 'a' },
      ],
    };
    expect(() => decode(loop)).toThrow(/through more than 40 symlinks/);
  });

  it('refuses a tree deeper than MAX_TREE_DEPTH, also when a shared directory is reached deeper the second time', () => {
    let dir: reapi.DirectoryInit = { files: [{ name: 'f', digest: digest('1') }] };
    const children: reapi.DirectoryInit[] = [dir];
    for (let i = 0; i < MAX_TREE_DEPTH - 1; i++) {
      dir = { directories: [{ name: 'd', digest: dirDigest(dir) }] };
      children.push(dir);
    }
    // MAX_TREE_DEPTH - 1 levels below the root's child: allowed.
    expect(decode({ directories: [{ name: 'd', digest: dirDigest(dir) }] }, children).files).toHaveLength(1);
    // The same chain under a shallow name and, counted already, one level deeper: too deep.
    const deeper: reapi.DirectoryInit = { directories: [{ name: 'x', digest: dirDigest(dir) }] };
    const root = {
      directories: [
        { name: 'a', digest: dirDigest(dir) },
        { name: 'b', digest: dirDigest(deeper) },
      ],
    };
    expect(() => decode(root, [...children, deeper])).toThrow(/nested more than 256 levels deep/);
  });

  it('refuses a tree whose files add up to more bytes than a tree may hold, before expanding it', () => {
    const huge = { hash: digest('x').hash, sizeBytes: 2 ** 40 };
    expect(() => decode({ files: [{ name: 'f', digest: huge }] })).toThrow(/expands to 1099511627776 bytes of files, more than the 274877906944/);
  });

  const dist = resolve('dist/src');
  it('refuses a 2^26-path tree bomb fast, within a 200 MB heap, decoded alone and as a remote result', { timeout: 60_000 }, () => {
    expect(existsSync(`${dist}/actions/index.js`)).toBe(true);
    // Each level's Directory names the level below twice: 26 levels, a 4 KB Tree, 2^26 files.
    const script = `
      const { decodeTree } = await import(${JSON.stringify(pathToFileURL(`${dist}/actions/index.js`).href)});
      const { digestOf, reapi } = await import(${JSON.stringify(pathToFileURL(`${dist}/core/index.js`).href)});
      const { resultOutputs } = await import(${JSON.stringify(pathToFileURL(`${dist}/remote/index.js`).href)});
      const dirDigest = (d) => digestOf(Buffer.from(reapi.Directory.encode(d)));
      let dir = { files: [{ name: 'f', digest: digestOf(Buffer.from('x')) }] };
      const children = [dir];
      for (let i = 0; i < 26; i++) {
        dir = { directories: [{ name: 'a', digest: dirDigest(dir) }, { name: 'b', digest: dirDigest(dir) }] };
        children.push(dir);
      }
      const data = Buffer.from(reapi.Tree.encode({ root: dir, children: children.slice(0, -1) }));
      const started = performance.now();
      try { decodeTree(reapi.Tree.decode(data), 'the bomb'); console.log('decoded'); } catch (e) { console.log(e.constructor.name + ': ' + e.message); }
      const result = reapi.ActionResult.decode(reapi.ActionResult.encode({ outputDirectories: [{ path: 'out/t', treeDigest: digestOf(data) }] }));
      await resultOutputs(result, new Map([['out/t', 'directory']]), async () => data).then(() => console.log('accepted'), (e) => console.log(e.constructor.name + ': ' + e.message));
      console.log(JSON.stringify({ treeBytes: data.length, ms: Math.round(performance.now() - started), heapMB: Math.round(process.memoryUsage().heapUsed / 1e6) }));
    `;
    const run = spawnSync(process.execPath, ['--max-old-space-size=200', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 50_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const [alone, asResult, figures] = run.stdout.trim().split('\n');
    expect(alone).toBe('InvalidTreeError: the bomb expands to 67108864 files, more than the 1000000 a tree may hold');
    expect(asResult).toBe("OutputDownloadError: output directory 'out/t' expands to 67108864 files, more than the 1000000 a tree may hold");
    expect(JSON.parse(figures!).treeBytes).toBeLessThan(8192);
  });
});
