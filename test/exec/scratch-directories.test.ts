import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScratchDirectories } from '../../src/exec/scratch-directories.js';

const roots: string[] = [];
afterEach(() => roots.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function scratch(): { dirs: ScratchDirectories; warnings: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'kiln-scratch-'));
  roots.push(root);
  const warnings: string[] = [];
  return { dirs: new ScratchDirectories(root, (m) => warnings.push(m)), warnings };
}

describe('ScratchDirectories', () => {
  it('hands a directory left holding only empty directories to the next action', async () => {
    const { dirs, warnings } = scratch();
    const first = dirs.acquire();
    mkdirSync(join(first, 'tmp'));
    dirs.release(first);
    expect(dirs.acquire()).toBe(first);
    expect(dirs.acquire()).not.toBe(first);
    await dirs.settled();
    expect(warnings).toEqual([]);
  });

  it('removes, off the calling thread, a directory left with files, nested content or a closed mode', async () => {
    const { dirs } = scratch();
    const withFile = dirs.acquire();
    writeFileSync(join(withFile, 'command.sh'), 'echo');
    const nested = dirs.acquire();
    mkdirSync(join(nested, 'out0', 'sub'), { recursive: true });
    const closed = dirs.acquire();
    mkdirSync(join(closed, 'tmp'));
    chmodSync(join(closed, 'tmp'), 0o500);
    for (const d of [withFile, nested, closed]) dirs.release(d);
    await dirs.settled();
    for (const d of [withFile, nested, closed]) expect(existsSync(d)).toBe(false);
    expect([withFile, nested, closed]).not.toContain(dirs.acquire());
  });
});
