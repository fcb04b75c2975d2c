import { describe, expect, it } from 'vitest';
import type { FileEntry } from '../../../src/analysis/configured/configured-target.js';
import { runfilesTree } from '../../../src/analysis/rules/runfiles-tree.js';

const BIN = 'bazel-out/k8-fastbuild/bin';
const exe: FileEntry = { artifact: { kind: 'derived', execPath: `${BIN}/pkg/t`, root: BIN, owner: '//pkg:t' }, rootPath: 'pkg/t' };
const own: FileEntry = { artifact: { kind: 'source', execPath: 'pkg/data.txt' }, rootPath: 'pkg/data.txt' };
const external: FileEntry = { artifact: { kind: 'source', execPath: 'external/r/f.txt' }, rootPath: '../r/f.txt' };

describe('runfilesTree', () => {
  it("puts another repository's files under <repo>/, and with --legacy_external_runfiles also under <workspace>/external/<repo>/", () => {
    const manifestOf = (legacy: boolean) => {
      const tree = runfilesTree(exe, [own, external], 'ws', '//pkg:t', legacy);
      const work = tree.action.inProcess;
      return work?.kind === 'copies' ? work.writes[0]![1] : '';
    };
    expect(manifestOf(false)).toBe(`r/f.txt external/r/f.txt\nws/pkg/data.txt pkg/data.txt\nws/pkg/t ${BIN}/pkg/t\n`);
    expect(manifestOf(true)).toBe(`r/f.txt external/r/f.txt\nws/external/r/f.txt external/r/f.txt\nws/pkg/data.txt pkg/data.txt\nws/pkg/t ${BIN}/pkg/t\n`);
  });
});
