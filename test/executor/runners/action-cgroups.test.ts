import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ActionCgroups, type CgroupPaths } from '../../../executor/runners/action-cgroups.js';

/** A fake /proc/self and cgroup mount under a temp directory: only what ActionCgroups.open reads. */
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'kiln-cgroups-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function fakeMachine(cgroup: string, mountinfo: string): CgroupPaths {
  writeFileSync(join(root, 'cgroup'), cgroup);
  writeFileSync(join(root, 'mountinfo'), mountinfo);
  return { selfCgroup: join(root, 'cgroup'), selfMountinfo: join(root, 'mountinfo'), root };
}

const V2_MOUNT = '41 31 0:38 / /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n';

describe('ActionCgroups.open', () => {
  it('says why when the v2 cgroup has no memory or pids controller delegated and no v1 hierarchy is mounted', () => {
    const own = join(root, 'sys/fs/cgroup/user.slice');
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'cgroup.controllers'), 'cpu hugetlb\n');
    const opened = ActionCgroups.open(fakeMachine('0::/user.slice\n', V2_MOUNT));
    expect(opened).toEqual({
      reason: `cgroup v2: the controllers memory, pids are not delegated to this process's cgroup ${own}; cgroup v1: no memory hierarchy is mounted`,
    });
  });

  it('says why when nothing is mounted', () => {
    expect(ActionCgroups.open(fakeMachine('', ''))).toEqual({ reason: 'no cgroup v2 hierarchy is mounted; cgroup v1: no memory hierarchy is mounted' });
  });

  it('takes a delegated v2 cgroup: moves its processes to a leaf, enables the controllers one level down at a time', () => {
    const own = join(root, 'sys/fs/cgroup/service');
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'cgroup.controllers'), 'cpu memory pids\n');
    writeFileSync(join(own, 'cgroup.subtree_control'), '\n');
    writeFileSync(join(own, 'cgroup.procs'), `${process.pid}\n`);
    const opened = ActionCgroups.open(fakeMachine('0::/service\n', V2_MOUNT));
    expect(readFileSync(join(own, 'kiln-executor/cgroup.procs'), 'utf8')).toBe(String(process.pid));
    expect(readFileSync(join(own, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +pids +cpu');
    // The kernel fills a new cgroup directory with its files; this fake does not, so the next level,
    // the executor's directory, cannot hand the controllers on, and says so.
    expect(opened).toEqual({
      reason: expect.stringMatching(new RegExp(`^cgroup v2: cannot make action cgroups under ${own}: .*kiln-${process.pid}-\\d+/cgroup.controllers`)),
    });
    // A second runner of the process, now in the leaf, takes the same delegated cgroup.
    const again = ActionCgroups.open(fakeMachine('0::/service/kiln-executor\n', V2_MOUNT));
    expect(again).toEqual({ reason: expect.stringMatching(new RegExp(`^cgroup v2: cannot make action cgroups under ${own}: `)) });
  });

  it('refuses to run an action unlimited when its cgroup has no limit files', () => {
    const mounts = '35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n39 31 0:36 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n';
    for (const dir of ['memory', 'pids']) mkdirSync(join(root, 'sys/fs/cgroup', dir), { recursive: true });
    const cgroups = ActionCgroups.open(fakeMachine('8:pids:/\n4:memory:/\n', mounts)) as ActionCgroups;
    expect(() => cgroups.make({ memoryBytes: 1 << 30, pids: 100, cpus: 1 })).toThrow(/cannot limit the action: its cgroup has no memory.limit_in_bytes/);
    // Without limits there is nothing to write.
    expect(cgroups.make({ memoryBytes: 0, pids: 0, cpus: 0 }).procsFiles).toHaveLength(2);
  });

  it('takes writable v1 hierarchies of memory, pids and cpu (cpu,cpuacct mounted together)', () => {
    const mounts =
      '32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n' +
      '35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n' +
      '39 31 0:36 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n';
    for (const dir of ['cpu,cpuacct', 'memory/job', 'pids']) mkdirSync(join(root, 'sys/fs/cgroup', dir), { recursive: true });
    const opened = ActionCgroups.open(fakeMachine('8:pids:/\n4:memory:/job\n1:cpu,cpuacct:/\n0::/\n', mounts));
    expect(opened).toBeInstanceOf(ActionCgroups);
    expect((opened as ActionCgroups).version).toBe(1);
    const action = (opened as ActionCgroups).make({ memoryBytes: 0, pids: 0, cpus: 0 });
    expect(action.procsFiles.map((f) => f.slice(root.length))).toEqual([
      expect.stringMatching(/^\/sys\/fs\/cgroup\/memory\/job\/kiln-\d+-\d+\/action-0\/cgroup.procs$/),
      expect.stringMatching(/^\/sys\/fs\/cgroup\/pids\/kiln-\d+-\d+\/action-0\/cgroup.procs$/),
      expect.stringMatching(/^\/sys\/fs\/cgroup\/cpu,cpuacct\/kiln-\d+-\d+\/action-0\/cgroup.procs$/),
    ]);
  });
});
