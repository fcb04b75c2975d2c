import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inProcessContent, performInProcessWork } from '../../src/exec/in-process-work.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function execRoot(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'kiln-in-process-'));
  dirs.push(root);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

describe('in-process work', () => {
  it('write: the content as UTF-8', async () => {
    expect((await inProcessContent({ kind: 'write', content: 'héllo\n' }, execRoot({}))).toString('utf8')).toBe('héllo\n');
  });

  it('expand_template: every substitution in order, each over the whole text', async () => {
    const root = execRoot({ 'pkg/t.tpl': '{A} {B} {A}\n' });
    const out = await inProcessContent(
      {
        kind: 'expand_template',
        template: 'pkg/t.tpl',
        substitutions: [
          ['{A}', '{B}'],
          ['{B}', 'b'],
        ],
      },
      root,
    );
    expect(out.toString('utf8')).toBe('b b b\n');
  });

  it('symlink: the bytes of the target file', async () => {
    const root = execRoot({ 'pkg/bin': '\x00\x01binary' });
    expect(await inProcessContent({ kind: 'symlink', target: 'pkg/bin' }, root)).toEqual(Buffer.from('\x00\x01binary'));
  });

  it('copies: files with their executable bit, trees with their symlinks kept, then the writes, parents made', async () => {
    const root = execRoot({ 'pkg/run.sh': '#!/bin/sh\n', 'pkg/data.txt': 'data', 'out/tree/a/b.txt': 'b' });
    chmodSync(join(root, 'pkg/run.sh'), 0o755);
    symlinkSync('a/b.txt', join(root, 'out/tree/link'));
    const work = {
      kind: 'copies',
      copies: [
        ['pkg/run.sh', 'bin/t.runfiles/ws/pkg/run.sh'],
        ['pkg/data.txt', 'bin/t.runfiles/ws/pkg/data.txt'],
        ['out/tree', 'bin/t.runfiles/ws/out/tree'],
      ],
      writes: [
        ['bin/t.runfiles/MANIFEST', 'ws/pkg/run.sh pkg/run.sh\n'],
        ['bin/t.runfiles_manifest', 'ws/pkg/run.sh pkg/run.sh\n'],
      ],
    } as const;
    await performInProcessWork(work, root, join(root, 'bin/t.runfiles/ws/pkg/run.sh'));
    const tree = join(root, 'bin/t.runfiles/ws');
    expect(statSync(join(tree, 'pkg/run.sh')).mode & 0o111).not.toBe(0);
    expect(statSync(join(tree, 'pkg/data.txt')).mode & 0o111).toBe(0);
    expect(readFileSync(join(tree, 'pkg/data.txt'), 'utf8')).toBe('data');
    expect(readFileSync(join(tree, 'out/tree/a/b.txt'), 'utf8')).toBe('b');
    expect(lstatSync(join(tree, 'out/tree/link')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(tree, 'out/tree/link'))).toBe('a/b.txt');
    expect(readFileSync(join(root, 'bin/t.runfiles/MANIFEST'), 'utf8')).toBe('ws/pkg/run.sh pkg/run.sh\n');
    expect(readFileSync(join(root, 'bin/t.runfiles_manifest'), 'utf8')).toBe('ws/pkg/run.sh pkg/run.sh\n');
  });

  it('copies: a missing input is an error, not a crash', async () => {
    await expect(performInProcessWork({ kind: 'copies', copies: [['pkg/none', 'bin/x']], writes: [] }, execRoot({}), '')).rejects.toThrow(/ENOENT/);
  });

  it('a missing template is an error, not a crash', async () => {
    await expect(inProcessContent({ kind: 'expand_template', template: 'pkg/none', substitutions: [] }, execRoot({}))).rejects.toThrow(/ENOENT/);
  });
});
