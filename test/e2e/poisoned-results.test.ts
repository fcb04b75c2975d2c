import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { digestOf, reapi, type Digest } from '../../src/core/index.js';
import { startHostileReapiServer } from '../remote/hostile-reapi-server.js';
import { connect, must } from '../scheduler/cache-server-fixture.js';
import { E2eWorkspace, sourceTreeHash, tempDir } from './e2e-workspace.js';
import { startKilnCluster } from './kiln-cluster.js';

// A Starlark rule whose one action makes a tree artifact (bazel-out/k8-fastbuild/bin/pkg/t_d).
const FILES = {
  'MODULE.bazel': 'module(name = "poisoned")\n',
  'pkg/defs.bzl': [
    'def _tree(ctx):',
    '    d = ctx.actions.declare_directory(ctx.attr.name + "_d")',
    '    ctx.actions.run_shell(outputs = [d], command = "mkdir -p %s/sub && echo real > %s/a.txt && echo deep > %s/sub/b.txt" % (d.path, d.path, d.path))',
    '    return [DefaultInfo(files = depset([d]))]',
    'tree = rule(_tree)',
    '',
  ].join('\n'),
  'pkg/BUILD': 'load(":defs.bzl", "tree")\ntree(name = "t")\n',
  'pkg/source.txt': 'a source file\n',
};
const TREE = 'bazel-out/k8-fastbuild/bin/pkg/t_d';

/** The one action's key: the name of the only entry a build left in `--disk_cache`'s ac/. */
function onlyActionKey(diskCache: string): string {
  const keys = readdirSync(join(diskCache, 'ac'))
    .filter((d) => d !== 'tmp')
    .flatMap((d) => readdirSync(join(diskCache, 'ac', d)));
  expect(keys).toHaveLength(1);
  return keys[0]!;
}

const blob = (data: Buffer) => ({ digest: digestOf(data), data });

/** The probe's result: the tree artifact, and a symlink at the same path into the workspace's pkg/, through which the tree's BUILD would land. */
function treeThroughSymlink(): { result: reapi.ActionResultInit; blobs: { digest: Digest; data: Buffer }[] } {
  const pwned = blob(Buffer.from('pwned\n'));
  const tree = blob(
    Buffer.from(
      reapi.Tree.encode({
        root: {
          files: [
            { name: 'BUILD', digest: pwned.digest },
            { name: 'planted.txt', digest: pwned.digest },
          ],
        },
      }),
    ),
  );
  return {
    result: { exitCode: 0, outputDirectories: [{ path: TREE, treeDigest: tree.digest }], outputSymlinks: [{ path: TREE, target: '../../../../pkg' }] },
    blobs: [pwned, tree],
  };
}

/** A 4 KB Tree naming 2^26 files: each level's Directory holds the level below twice. */
function treeBomb(): { result: reapi.ActionResultInit; blobs: { digest: Digest; data: Buffer }[] } {
  const file = blob(Buffer.from('x'));
  let level: reapi.DirectoryInit = { files: [{ name: 'f', digest: file.digest }] };
  const children: reapi.DirectoryInit[] = [];
  for (let i = 0; i < 26; i++) {
    children.push(level);
    const digest = digestOf(Buffer.from(reapi.Directory.encode(level)));
    level = {
      directories: [
        { name: 'a', digest },
        { name: 'b', digest },
      ],
    };
  }
  const tree = blob(Buffer.from(reapi.Tree.encode({ root: level, children })));
  return { result: { exitCode: 0, outputDirectories: [{ path: TREE, treeDigest: tree.digest }] }, blobs: [file, tree] };
}

type Poison = { result: reapi.ActionResultInit | Buffer; blobs: { digest: Digest; data: Buffer }[] };

/**
 * An ActionResult naming one output directory whose tree digest claims `sizeBytes`, written by hand:
 * Kiln's codec refuses to encode an int64 beyond 2^53, which is what makes it refuse to decode one.
 */
function resultWithTreeSize(path: string, hash: string, sizeBytes: bigint): Buffer {
  const varint = (n: bigint) => {
    const out: number[] = [];
    let v = BigInt.asUintN(64, n);
    do {
      out.push(Number(v & 0x7fn) | (v > 0x7fn ? 0x80 : 0));
      v >>= 7n;
    } while (v > 0n);
    return Buffer.from(out);
  };
  const field = (tag: number, body: Buffer) => Buffer.concat([varint(BigInt((tag << 3) | 2)), varint(BigInt(body.length)), body]);
  const digest = Buffer.concat([field(1, Buffer.from(hash)), varint(BigInt(2 << 3)), varint(sizeBytes)]);
  // ActionResult.output_directories = 3; OutputDirectory.path = 1, tree_digest = 3.
  return field(3, Buffer.concat([field(1, Buffer.from(path)), field(3, digest)]));
}

/** A result whose one output directory is `tree` (its blobs planted as they are given, true or not). */
function withTree(tree: reapi.TreeInit, blobs: { digest: Digest; data: Buffer }[] = [], path = TREE): Poison {
  const t = blob(Buffer.from(reapi.Tree.encode(tree)));
  return { result: { exitCode: 0, outputDirectories: [{ path, treeDigest: t.digest }] }, blobs: [t, ...blobs] };
}

/** The other poisons of issue 28's probe, as cache entries: each is refused, and the action rebuilt. */
function morePoisons(): [string, Poison][] {
  const real = Buffer.from('real\n');
  const fileTree = { root: { files: [{ name: 'a.txt', digest: digestOf(real) }] } };
  const hugeTree = withTree(fileTree);
  const treeHash = hugeTree.blobs[0]!.digest.hash;
  return [
    ['an output path that escapes', withTree(fileTree, [blob(real)], `${TREE}/../../../../../../escape`)],
    [
      'one path named twice',
      {
        result: {
          exitCode: 0,
          outputDirectories: [
            { path: TREE, treeDigest: withTree(fileTree).blobs[0]!.digest },
            { path: TREE, treeDigest: withTree({ root: {} }).blobs[0]!.digest },
          ],
        },
        blobs: [...withTree(fileTree, [blob(real)]).blobs, ...withTree({ root: {} }).blobs],
      },
    ],
    [
      'a symlink chain that leaves the tree',
      withTree({
        root: {
          symlinks: [
            { name: 'l1', target: 'l2/../..' },
            { name: 'l2', target: '.' },
          ],
        },
      }),
    ],
    ['a blob that is not its digest', withTree(fileTree, [{ digest: digestOf(real), data: Buffer.from('lies\n') }])],
    ['a blob shorter than its digest', withTree(fileTree, [{ digest: digestOf(real), data: Buffer.from('rea') }])],
    ['a claimed size of 2^62', { result: resultWithTreeSize(TREE, treeHash, 2n ** 62n), blobs: hugeTree.blobs }],
    ['a negative claimed size', { result: resultWithTreeSize(TREE, treeHash, -5n), blobs: hugeTree.blobs }],
  ];
}

describe('results a hostile client planted', () => {
  it('a poisoned result in the cluster (one UpdateActionResult) never writes into the source tree, nor crashes Kiln with a tree bomb', {
    timeout: 120_000,
  }, async () => {
    // On disk the cluster's action cache is keyed by the action's hash, as the disk cache names its entries.
    const cluster = await startKilnCluster(['--executors', '1', '--runner', 'local', '--storage', tempDir()]);
    const diskCache = tempDir();
    const first = new E2eWorkspace(FILES);
    const built = await first.kiln(['build', `--remote_executor=${cluster.endpoint}`, `--disk_cache=${diskCache}`, '//pkg:t']);
    expect(built.code, built.stderr).toBe(0);
    const actionDigest = { hash: onlyActionKey(diskCache), sizeBytes: 0 };

    const hostile = connect(cluster.endpoint);
    try {
      const cases = [
        ['tree and symlink at one path', treeThroughSymlink(), `the result names output symlink '${TREE}', which the action declares as a directory`],
        ['tree bomb', treeBomb(), `output directory '${TREE}' expands to 67108864 files, more than the 1000000 a tree may hold`],
      ] as const;
      for (const [name, poison, message] of cases) {
        await must(hostile.cas, hostile.cas.BatchUpdateBlobs, { requests: poison.blobs });
        await must(hostile.ac, hostile.ac.UpdateActionResult, { actionDigest, actionResult: poison.result });

        const victim = new E2eWorkspace(FILES);
        const before = sourceTreeHash(victim.root);
        const run = await victim.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//pkg:t']);
        expect(sourceTreeHash(victim.root), name).toBe(before);
        expect(victim.read('pkg/BUILD'), name).toBe(FILES['pkg/BUILD']);
        // Refused as a cache hit, then answered the same by the executor's cache: an error naming the action and the output,
        // with Bazel's exit code for a failed remote system (34), not a failed command's (1).
        expect(run.code, `${name}: ${run.stderr}`).toBe(34);
        expect(run.stderr).toContain(`ERROR: pkg/BUILD:2:1: Action pkg/t_d failed: remote execution on ${cluster.endpoint}: ${message}`);
        expect(run.stderr).toContain('Target //pkg:t failed to build');
      }
    } finally {
      hostile.close();
    }
  });

  it("a hostile server's Execute answer (not from a cache) is refused before anything is written, naming the action and the output", {
    timeout: 60_000,
  }, async () => {
    const server = await startHostileReapiServer();
    onTestFinished(() => server.close());
    const real = Buffer.from('real\n');
    // A tree whose file the server serves with other bytes than its digest names.
    const lyingTree = blob(Buffer.from(reapi.Tree.encode({ root: { files: [{ name: 'a.txt', digest: digestOf(real) }] } })));
    const cases = [
      ['tree and symlink at one path', treeThroughSymlink(), `the result names output symlink '${TREE}', which the action declares as a directory`],
      ['tree bomb', treeBomb(), `output directory '${TREE}' expands to 67108864 files, more than the 1000000 a tree may hold`],
      [
        'a blob that is not its digest',
        { result: { exitCode: 0, outputDirectories: [{ path: TREE, treeDigest: lyingTree.digest }] }, blobs: [lyingTree] },
        `output file '${TREE}/a.txt': blob ${digestOf(real).hash}/5 read from`,
      ],
    ] as const;
    for (const [name, poison, message] of cases) {
      for (const b of poison.blobs) server.put(b.data);
      server.cas.set(`${digestOf(real).hash}/${real.length}`, Buffer.from('lies\n'));
      server.script(
        'Execute',
        (_, request) =>
          void server.executeResults.set(
            `${(request as reapi.ExecuteRequest).actionDigest!.hash}/${(request as reapi.ExecuteRequest).actionDigest!.sizeBytes}`,
            poison.result as reapi.ActionResultInit,
          ),
      );
      const victim = new E2eWorkspace(FILES);
      const before = sourceTreeHash(victim.root);
      const run = await victim.kiln(['build', `--remote_executor=${server.url}`, '--remote_retries=0', '//pkg:t']);
      expect(sourceTreeHash(victim.root), name).toBe(before);
      expect(run.code, `${name}: ${run.stderr}`).toBe(34);
      expect(run.stderr).toContain(`ERROR: pkg/BUILD:2:1: Action pkg/t_d failed: remote execution on ${server.url}: `);
      expect(run.stderr).toContain(message);
    }
  });

  it('a poisoned --disk_cache entry is detected, deleted and rebuilt; the next build gets the right outputs from the cache', { timeout: 120_000 }, async () => {
    const diskCache = tempDir();
    const first = new E2eWorkspace(FILES);
    const built = await first.kiln(['build', '--spawn_strategy=local', `--disk_cache=${diskCache}`, '//pkg:t']);
    expect(built.code, built.stderr).toBe(0);
    const key = onlyActionKey(diskCache);
    const plant = (keyspace: 'ac' | 'cas', hash: string, data: Uint8Array) => {
      mkdirSync(join(diskCache, keyspace, hash.slice(0, 2)), { recursive: true });
      writeFileSync(join(diskCache, keyspace, hash.slice(0, 2), hash), data);
    };
    for (const [name, poison] of [['tree and symlink at one path', treeThroughSymlink()], ['tree bomb', treeBomb()], ...morePoisons()] as const) {
      for (const b of poison.blobs) plant('cas', b.digest.hash, b.data);
      plant('ac', key, Buffer.isBuffer(poison.result) ? poison.result : reapi.ActionResult.encode(poison.result));

      const victim = new E2eWorkspace(FILES);
      const before = sourceTreeHash(victim.root);
      const run = await victim.kiln(['build', '--spawn_strategy=local', `--disk_cache=${diskCache}`, '//pkg:t']);
      expect(run.code, `${name}: ${run.stderr}`).toBe(0);
      expect(run.stderr, name).toContain('1 local');
      expect(sourceTreeHash(victim.root), name).toBe(before);
      expect(victim.read(`kiln-bin/pkg/t_d/a.txt`)).toBe('real\n');
      // The poisoned entry was replaced by the rebuilt action's: another checkout is answered by it.
      const next = new E2eWorkspace(FILES);
      const cached = await next.kiln(['build', '--spawn_strategy=local', `--disk_cache=${diskCache}`, '//pkg:t']);
      expect(cached.code, cached.stderr).toBe(0);
      expect(cached.stderr, `${name}: ${cached.stderr}`).toContain('1 disk cache hit');
      expect(next.read('kiln-bin/pkg/t_d/sub/b.txt')).toBe('deep\n');
      expect(readdirSync(join(next.root, 'kiln-bin/pkg/t_d')).sort()).toEqual(['a.txt', 'sub']);
    }
  });
});
