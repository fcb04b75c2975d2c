import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { inProcessContent } from '../../src/exec/in-process-work.js';

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
    const out = await inProcessContent({ kind: 'expand_template', template: 'pkg/t.tpl', substitutions: [['{A}', '{B}'], ['{B}', 'b']] }, root);
    expect(out.toString('utf8')).toBe('b b b\n');
  });

  it('symlink: the bytes of the target file', async () => {
    const root = execRoot({ 'pkg/bin': '\x00\x01binary' });
    expect(await inProcessContent({ kind: 'symlink', target: 'pkg/bin' }, root)).toEqual(Buffer.from('\x00\x01binary'));
  });

  it('a missing template is an error, not a crash', async () => {
    await expect(inProcessContent({ kind: 'expand_template', template: 'pkg/none', substitutions: [] }, execRoot({}))).rejects.toThrow(/ENOENT/);
  });
});
