import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { reapi } from '../../src/core/index.js';
import { buildInputTree, computeActionKey } from '../../src/actions/index.js';
import { genrule, source } from '../exec/fixtures.js';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const contentDigest = (s: string) => ({ hash: sha(Buffer.from(s)), sizeBytes: Buffer.byteLength(s) });

describe('action keys', () => {
  const action = genrule('//pkg:g', { srcs: [source('pkg/in.txt')], outs: ['b.txt', 'a.txt'], cmd: 'cp $< $@' });
  const inputs = [{ path: 'pkg/in.txt', digest: contentDigest('hello\n'), isExecutable: false }];
  const env = { PATH: '/usr/bin:/bin', LANG: 'C' };

  it('is the SHA-256 of the serialized REAPI Action, computed as any REAPI client does', () => {
    // Hand-built messages: env sorted by name, outputs sorted in both output_files and output_paths.
    const command = reapi.Command.encode({
      arguments: ['/bin/bash', '-c', 'set -euo pipefail; cp $< $@'],
      environmentVariables: [
        { name: 'LANG', value: 'C' },
        { name: 'PATH', value: '/usr/bin:/bin' },
      ],
      outputFiles: ['bazel-out/k8-fastbuild/bin/pkg/a.txt', 'bazel-out/k8-fastbuild/bin/pkg/b.txt'],
      outputPaths: ['bazel-out/k8-fastbuild/bin/pkg/a.txt', 'bazel-out/k8-fastbuild/bin/pkg/b.txt'],
    });
    const pkgDir = reapi.Directory.encode({ files: [{ name: 'in.txt', digest: contentDigest('hello\n') }] });
    const rootDir = reapi.Directory.encode({ directories: [{ name: 'pkg', digest: { hash: sha(pkgDir), sizeBytes: pkgDir.length } }] });
    const actionBytes = reapi.Action.encode({
      commandDigest: { hash: sha(command), sizeBytes: command.length },
      inputRootDigest: { hash: sha(rootDir), sizeBytes: rootDir.length },
    });

    const key = computeActionKey(action, { env, inputs });
    expect(key.digest).toEqual({ hash: sha(actionBytes), sizeBytes: actionBytes.length });
    expect(Buffer.from(key.command.data).equals(command)).toBe(true);
    expect(key.inputTree.rootDigest.hash).toBe(sha(rootDir));
    // The same action and inputs always give the same key, whatever the order of env entries.
    expect(computeActionKey(action, { env: { LANG: 'C', PATH: '/usr/bin:/bin' }, inputs }).digest).toEqual(key.digest);
  });

  it('changes with PATH, the command, an input digest, and the no-cache requirement', () => {
    const base = computeActionKey(action, { env, inputs }).digest.hash;
    expect(computeActionKey(action, { env: { ...env, PATH: '/bin' }, inputs }).digest.hash).not.toBe(base);
    expect(computeActionKey({ ...action, argv: ['/bin/true'] }, { env, inputs }).digest.hash).not.toBe(base);
    expect(computeActionKey(action, { env, inputs: [{ ...inputs[0]!, digest: contentDigest('bye\n') }] }).digest.hash).not.toBe(base);
    const noCache = computeActionKey({ ...action, executionRequirements: ['no-cache'] }, { env, inputs });
    expect(noCache.digest.hash).not.toBe(base);
    expect(reapi.Action.decode(noCache.action.data).doNotCache).toBe(true);
  });

  it("carries a test's timeout as Action.timeout (as Bazel sends its timeout execution info)", () => {
    const timed = computeActionKey({ ...action, timeoutSeconds: 300 }, { env, inputs });
    expect(reapi.Action.decode(timed.action.data).timeout).toMatchObject({ seconds: 300, nanos: 0 });
    expect(reapi.Action.decode(computeActionKey(action, { env, inputs }).action.data).timeout).toBeFalsy();
  });

  it('sorts platform properties by name then value', () => {
    const key = computeActionKey(action, { env, inputs, platform: { 'container-image': 'x', OSFamily: 'Linux' } });
    const command = reapi.Command.decode(key.command.data);
    expect(command.platform?.properties.map((p) => p.name)).toEqual(['OSFamily', 'container-image']);
    expect(reapi.Action.decode(key.action.data).platform?.properties).toHaveLength(2);
  });
});

describe('input trees', () => {
  const file = (path: string, content: string, isExecutable = false) => ({ path, digest: contentDigest(content), isExecutable });

  it('are canonical: the order files are listed in does not matter, names are sorted at every level', () => {
    const files = [file('b/z.txt', 'z'), file('a.txt', 'a', true), file('b/c/d.txt', 'd'), file('B.txt', 'B'), file('b/a.txt', 'a')];
    const one = buildInputTree(files);
    const two = buildInputTree([...files].reverse());
    expect(two.rootDigest).toEqual(one.rootDigest);

    const byDigest = new Map(one.directories.map((d) => [d.digest.hash, reapi.Directory.decode(d.data)]));
    const root = byDigest.get(one.rootDigest.hash)!;
    expect(root.files.map((f) => f.name)).toEqual(['B.txt', 'a.txt']);
    expect(root.files[1]!.isExecutable).toBe(true);
    expect(root.directories.map((d) => d.name)).toEqual(['b']);
    const b = byDigest.get(root.directories[0]!.digest!.hash)!;
    expect(b.files.map((f) => f.name)).toEqual(['a.txt', 'z.txt']);
    expect(b.directories.map((d) => d.name)).toEqual(['c']);
    // Every message is encoded canonically: re-encoding the decoded message gives the same bytes.
    for (const d of one.directories) expect(reapi.Directory.encode(reapi.Directory.decode(d.data)).equals(d.data)).toBe(true);
  });

  it('rejects a path that is both a file and a directory', () => {
    expect(() => buildInputTree([file('a', '1'), file('a/b', '2')])).toThrow(/both a file and a directory/);
  });

  it('gives the empty tree the digest of an empty Directory', () => {
    expect(buildInputTree([]).rootDigest.hash).toBe(sha(Buffer.alloc(0)));
  });
});
