import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BuildGraphCache, type BuildGraph, type BuildGraphKey } from '../../src/build/index.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function cacheDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-graph-'));
  dirs.push(dir);
  return join(dir, 'analysis');
}

const KEY: BuildGraphKey = {
  command: 'build',
  patterns: ['//...'],
  offset: '',
  options: '',
  workspaceName: '',
  ignoredDirectories: [],
  host: { platform: 'linux', arch: 'x64' },
};

const GRAPH: BuildGraph = {
  targets: [{ label: '//a:b', files: ['bazel-out/k8-fastbuild/bin/a/b.txt'] }],
  actions: [
    {
      owner: '//a:b',
      location: { file: 'a/BUILD', line: 1, col: 1 },
      mnemonic: 'Genrule',
      progressMessage: 'Executing genrule //a:b',
      argv: ['/bin/bash', '-c', 'echo b > bazel-out/k8-fastbuild/bin/a/b.txt'],
      env: {},
      inputs: [{ kind: 'source', execPath: 'a/in.txt' }],
      outputs: [{ kind: 'derived', execPath: 'bazel-out/k8-fastbuild/bin/a/b.txt', root: 'bazel-out/k8-fastbuild/bin', owner: '//a:b' }],
      executionRequirements: [],
      executableOutputs: false,
    },
  ],
  requested: ['bazel-out/k8-fastbuild/bin/a/b.txt'],
  outputDirectories: {
    root: 'bazel-out/k8-fastbuild',
    bin: 'bazel-out/k8-fastbuild/bin',
    genfiles: 'bazel-out/k8-fastbuild/bin',
    testlogs: 'bazel-out/k8-fastbuild/testlogs',
  },
};

describe('BuildGraphCache', () => {
  it('gives back the stored graph and warnings while the inputs are unchanged', () => {
    const cache = new BuildGraphCache(cacheDir());
    const key = BuildGraphCache.key(KEY);
    const packages = [{ repo: '', pkg: 'a', buildFile: 'file:/w/a/BUILD', fingerprint: 'p1' }];
    cache.store(key, new Map([['file:/w/a/BUILD', 'h1']]), GRAPH, ['WARNING: w\n'], packages);
    let asked: unknown[] = [];
    const hit = cache.lookup(key, (inputs, recorded) => ((asked = [inputs, recorded]), true));
    expect(hit).toEqual({ graph: GRAPH, warnings: ['WARNING: w\n'], inputs: [['file:/w/a/BUILD', 'h1']], packages });
    expect(asked).toEqual([[['file:/w/a/BUILD', 'h1']], packages]);
    expect(cache.lookup(key, () => false)).toBeUndefined();
    expect(cache.lookup(BuildGraphCache.key({ ...KEY, options: '--define="a=1"' }), () => true)).toBeUndefined();
  });

  it('keys differ with every part of the command line analysis reads', () => {
    const variants: BuildGraphKey[] = [
      KEY,
      { ...KEY, command: 'run' },
      { ...KEY, patterns: ['//a/...'] },
      { ...KEY, offset: 'a' },
      { ...KEY, options: '--compilation_mode="opt"' },
      { ...KEY, workspaceName: 'w' },
      { ...KEY, ignoredDirectories: ['x'] },
      { ...KEY, host: { platform: 'linux', arch: 'arm64' } },
    ];
    expect(new Set(variants.map((k) => BuildGraphCache.key(k))).size).toBe(variants.length);
  });

  it('treats a damaged entry as absent, and stores nothing when the directory cannot be written', () => {
    const dir = cacheDir();
    const cache = new BuildGraphCache(dir);
    const key = BuildGraphCache.key(KEY);
    cache.store(key, new Map(), GRAPH, [], []);
    writeFileSync(join(dir, `${key}.v8`), 'not a graph');
    expect(cache.lookup(key, () => true)).toBeUndefined();

    const plainFile = join(cacheDir(), '..', 'plain');
    writeFileSync(plainFile, '');
    const blocked = join(plainFile, 'analysis'); // below a file: mkdir fails
    new BuildGraphCache(blocked).store(key, new Map(), GRAPH, [], []);
    expect(new BuildGraphCache(blocked).lookup(key, () => true)).toBeUndefined();
    expect(readdirSync(dir)).toEqual([`${key}.v8`]);
  });
});
