import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { filesUnchanged, nullBuildKey, NullBuildRecords, type NullBuildRecord } from '../../src/build/index.js';
import { fileStampOf } from '../../src/core/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'kiln-null-build-'));
  dirs.push(d);
  return d;
}

function recordOf(execRoot: string, paths: string[], key = 'k'): NullBuildRecord {
  return {
    key,
    warnings: ['WARNING: w\n'],
    analyzedTargets: 3,
    totalActions: 7,
    targets: [{ label: '//a:b', files: ['bazel-out/k8-fastbuild/bin/a/b'] }],
    bin: 'bazel-out/k8-fastbuild/bin',
    genfiles: 'bazel-out/k8-fastbuild/bin',
    testlogs: 'bazel-out/k8-fastbuild/testlogs',
    analysisInputs: [
      ['file:a/BUILD', 'f1'],
      ['dir:a', 'f2'],
    ],
    analysisPackages: [{ repo: '', pkg: 'a', buildFile: 'file:a/BUILD', fingerprint: 'p1' }],
    files: paths.map((path) => ({ path, stamp: fileStampOf(statSync(join(execRoot, path))) })),
  };
}

describe('null build records', () => {
  it('reads back what was written, for its key only', () => {
    const root = tempDir();
    mkdirSync(join(root, 'a'));
    writeFileSync(join(root, 'a/src.txt'), 'x');
    const records = new NullBuildRecords(join(root, 'ob'));
    const record = recordOf(root, ['a/src.txt']);
    records.write(record);
    expect(records.read('k')).toEqual(record);
    expect(records.read('other')).toBeUndefined();
    records.discard();
    expect(records.read('k')).toBeUndefined();
  });

  it('a damaged record is no record', () => {
    const root = tempDir();
    writeFileSync(join(root, 'f'), 'x');
    const records = new NullBuildRecords(join(root, 'ob'));
    records.write(recordOf(root, ['f']));
    const file = join(root, 'ob', 'analysis', 'null-build.bin');
    const bytes = readFileSync(file);
    bytes[bytes.length - 3]! ^= 0xff;
    writeFileSync(file, bytes);
    expect(records.read('k')).toBeUndefined();
  });

  it('files are unchanged only while each has its stamp and is a file', () => {
    const root = tempDir();
    writeFileSync(join(root, 'f'), 'x');
    writeFileSync(join(root, 'g'), 'y');
    const record = recordOf(root, ['f', 'g']);
    expect(filesUnchanged(record, root)).toBe(true);
    writeFileSync(join(root, 'g'), 'z'); // same size: the times and ctime tell
    expect(filesUnchanged(record, root)).toBe(false);
    const again = recordOf(root, ['f', 'g']);
    rmSync(join(root, 'f'));
    expect(filesUnchanged(again, root)).toBe(false);
    mkdirSync(join(root, 'f'));
    expect(filesUnchanged({ ...again, files: [{ path: 'f', stamp: fileStampOf(statSync(join(root, 'f'))) }] }, root)).toBe(false);
  });

  it('the key covers the build graph, every option and PATH', () => {
    const key = nullBuildKey('graph', '--jobs=1', '/bin');
    expect(nullBuildKey('graph', '--jobs=1', '/bin')).toBe(key);
    expect(nullBuildKey('graph2', '--jobs=1', '/bin')).not.toBe(key);
    expect(nullBuildKey('graph', '--jobs=2', '/bin')).not.toBe(key);
    expect(nullBuildKey('graph', '--jobs=1', '/usr/bin')).not.toBe(key);
    expect(nullBuildKey('graph', '--jobs=1', undefined)).not.toBe(key);
  });
});
