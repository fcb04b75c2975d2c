import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeSandboxDirectory, removeOrphanedSandboxDirectories } from '../../../src/core/sandbox/sandbox-directory.js';

const parents: string[] = [];
afterEach(() => {
  for (const p of parents.splice(0)) rmSync(p, { recursive: true, force: true });
});

function tempParent(): string {
  const p = mkdtempSync(join(tmpdir(), 'kiln-sandbox-dir-test-'));
  parents.push(p);
  return p;
}

/** The pid of a process that has exited (and was reaped). */
function deadPid(): number {
  const r = spawnSync('/bin/sh', ['-c', 'echo $$'], { encoding: 'utf8' });
  return Number(r.stdout.trim());
}

describe('sandbox work directories', () => {
  it('are named with the owner pid, and those of processes that are gone are removed at the next start', () => {
    const parent = tempParent();
    const dead = deadPid();
    const outside = join(parent, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep.txt'), 'precious');
    const orphan = join(parent, `kiln-sandbox-${dead}-aaaaaa`);
    mkdirSync(join(orphan, 'base'), { recursive: true });
    symlinkSync(outside, join(orphan, 'base', 'link')); // a link inside is removed, not followed
    mkdirSync(join(parent, `kiln-sandbox-etc-${dead}-bbbbbb`));
    const mine = join(parent, `kiln-sandbox-${process.pid}-cccccc`);
    mkdirSync(mine);
    const alive = join(parent, 'kiln-sandbox-1-dddddd'); // pid 1 always exists
    mkdirSync(alive);
    symlinkSync(outside, join(parent, `kiln-sandbox-${dead}-eeeeee`)); // a symlink is never a sandbox directory
    writeFileSync(join(parent, `kiln-sandbox-${dead}-ffffff`), 'a file');
    const unrelated = join(parent, 'kiln-sandbox-notapid-gggggg');
    mkdirSync(unrelated);

    const made = makeSandboxDirectory('kiln-sandbox', parent);

    expect(made.startsWith(join(parent, `kiln-sandbox-${process.pid}-`))).toBe(true);
    expect(readdirSync(parent).sort()).toEqual(
      [
        'kiln-sandbox-1-dddddd',
        `kiln-sandbox-${dead}-eeeeee`,
        `kiln-sandbox-${dead}-ffffff`,
        `kiln-sandbox-${process.pid}-cccccc`,
        made.slice(parent.length + 1),
        'kiln-sandbox-notapid-gggggg',
        'outside',
      ].sort(),
    );
    expect(existsSync(join(outside, 'keep.txt'))).toBe(true);
    expect(existsSync(mine) && existsSync(alive) && existsSync(unrelated)).toBe(true);
  });

  it('a missing parent is not an error', () => {
    expect(() => removeOrphanedSandboxDirectories(join(tempParent(), 'absent'))).not.toThrow();
  });
});
