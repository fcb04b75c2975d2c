import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeDeadWorkDirectories } from '../../executor/index.js';

let parent: string;
beforeEach(() => {
  parent = mkdtempSync(join(tmpdir(), 'kiln-dead-dirs-'));
});
afterEach(() => rmSync(parent, { recursive: true, force: true }));

describe('removeDeadWorkDirectories', () => {
  it('removes the directories of processes that are gone, and only those', async () => {
    const dead = spawnSync('true').pid!;
    const make = (name: string) => {
      mkdirSync(join(parent, name, 'build', 'x'), { recursive: true });
      return join(parent, name);
    };
    const gone = make(`kiln-executor-${dead}`);
    const goneWithSuffix = make(`kiln-executor-${dead}-Ab12Cd`);
    const alive = make(`kiln-executor-${process.pid}`);
    const parentOfUs = make(`kiln-executor-${process.ppid}`);
    const notOurs = make('kiln-executor-abc');
    const other = make(`kiln-other-${dead}`);
    writeFileSync(join(parent, `kiln-executor-${dead + 1}`), 'a file, not a work directory');
    expect((await removeDeadWorkDirectories(parent, 'kiln-executor-')).sort()).toEqual([gone, goneWithSuffix].sort());
    for (const path of [alive, parentOfUs, notOurs, other, join(parent, `kiln-executor-${dead + 1}`)]) expect(existsSync(path)).toBe(true);
  });

  it('finds nothing in a parent that does not exist', async () => {
    expect(await removeDeadWorkDirectories(join(parent, 'missing'), 'kiln-executor-')).toEqual([]);
  });
});
