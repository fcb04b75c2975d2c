import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { processExists } from './process-exists.js';
import type { ResourceLimits } from './resource-limits.js';

/** Where the kernel's views live; tests point them at a fake tree. */
export interface CgroupPaths {
  /** /proc/self/cgroup. */
  readonly selfCgroup: string;
  /** /proc/self/mountinfo. */
  readonly selfMountinfo: string;
  /** Prepended to every mount point read from mountinfo ('' on a real machine). */
  readonly root: string;
}

const SYSTEM_PATHS: CgroupPaths = { selfCgroup: '/proc/self/cgroup', selfMountinfo: '/proc/self/mountinfo', root: '' };

/** One action's cgroup (one directory per v1 hierarchy, one in v2). */
export interface ActionCgroup {
  /** The `cgroup.procs` files the action's first process writes its pid to before it starts the command. */
  readonly procsFiles: readonly string[];
  /** The kernel killed a process of the action for going beyond its memory limit. */
  outOfMemory(): boolean;
  /** Kills what is left in it and removes it. */
  remove(): Promise<void>;
}

/**
 * Memory (no swap), pids and CPU limits for the local runner's actions through the kernel's cgroups,
 * in a directory of the executor's own cgroup: cgroup v2 when the executor's cgroup is delegated to
 * it (writable, with the memory and pids controllers available), else cgroup v1 hierarchies of those
 * controllers the executor may write (as root). `open` says why neither works when it cannot.
 */
export class ActionCgroups {
  private next = 0;

  private constructor(
    readonly version: 1 | 2,
    /** The executor's directory in each hierarchy, holding one directory per action. */
    private readonly parents: readonly string[],
  ) {}

  /**
   * The executor's directories are named `kiln-<pid>-<n>`, one per runner; those of executor
   * processes that no longer exist (killed before they could remove them) are removed.
   */
  static open(paths: CgroupPaths = SYSTEM_PATHS): ActionCgroups | { readonly reason: string } {
    const name = `${process.pid}-${opened++}`;
    let own: Map<string, string>;
    let mounts: { point: string; fstype: string; options: string[] }[];
    try {
      own = ownCgroups(readFileSync(paths.selfCgroup, 'utf8'));
      mounts = cgroupMounts(readFileSync(paths.selfMountinfo, 'utf8'), paths.root);
    } catch (e) {
      return { reason: `cannot read this process's cgroups: ${(e as Error).message}` };
    }
    const v2 = openV2(name, own, mounts);
    if (v2 instanceof ActionCgroups) return v2;
    const v1 = openV1(name, own, mounts);
    if (v1 instanceof ActionCgroups) return v1;
    return { reason: `${v2.reason}; ${v1.reason}` };
  }

  static create(version: 1 | 2, parents: readonly string[]): ActionCgroups {
    for (const parent of parents) {
      removeDeadExecutors(dirname(parent));
      mkdirSync(parent, { recursive: true });
      // v2 hands a controller down one level at a time: the actions below get what this enables.
      if (version === 2) enableForChildren(parent);
    }
    return new ActionCgroups(version, parents);
  }

  /** A new cgroup with these limits (0: none). */
  make(limits: ResourceLimits): ActionCgroup {
    const name = `action-${this.next++}`;
    const dirs = this.parents.map((parent) => join(parent, name));
    for (const dir of dirs) mkdirSync(dir);
    try {
      writeLimits(this.version, dirs, limits);
    } catch (e) {
      for (const dir of dirs) removeCgroupSync(dir);
      throw e;
    }
    const version = this.version;
    return {
      procsFiles: dirs.map((dir) => join(dir, 'cgroup.procs')),
      outOfMemory: () => dirs.some((dir) => oomKilled(version, dir)),
      remove: async () => {
        for (const dir of dirs) await removeCgroup(dir);
      },
    };
  }

  /** Removes the executor's directories (no action runs any more). */
  close(): void {
    for (const parent of this.parents) {
      for (const entry of readdirSync(parent, { withFileTypes: true })) if (entry.isDirectory()) removeCgroupSync(join(parent, entry.name));
      removeCgroupSync(parent);
    }
  }
}

let opened = 0;

/** Removes the directories of executor processes that are gone, with whatever they left inside. */
function removeDeadExecutors(dir: string): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const m = /^kiln-(\d+)-\d+$/.exec(entry.name);
    if (!m || !entry.isDirectory() || processExists(Number(m[1]))) continue;
    const parent = join(dir, entry.name);
    for (const child of readdirSync(parent, { withFileTypes: true })) if (child.isDirectory()) removeCgroupSync(join(parent, child.name));
    removeCgroupSync(parent);
  }
}

/** controller (or '' for v2) → the process's path in that hierarchy. */
function ownCgroups(text: string): Map<string, string> {
  const own = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    for (const controller of m[1] === '' ? [''] : m[1]!.split(',')) own.set(controller, m[2]!);
  }
  return own;
}

function cgroupMounts(text: string, root: string): { point: string; fstype: string; options: string[] }[] {
  const mounts = [];
  for (const line of text.split('\n')) {
    // id parent major:minor root point options [optional...] - fstype source superoptions
    const [before, after] = line.split(' - ');
    if (!before || !after) continue;
    const [fstype, , superOptions = ''] = after.split(' ');
    if (fstype !== 'cgroup' && fstype !== 'cgroup2') continue;
    const point = unescapeMount(before.split(' ')[4] ?? '');
    mounts.push({ point: root + point, fstype, options: superOptions.split(',') });
  }
  return mounts;
}

function unescapeMount(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

function openV2(name: string, own: Map<string, string>, mounts: { point: string; fstype: string }[]): ActionCgroups | { reason: string } {
  const mount = mounts.find((m) => m.fstype === 'cgroup2');
  const path = own.get('');
  if (!mount || path === undefined) return { reason: 'no cgroup v2 hierarchy is mounted' };
  // A second runner of this process finds it already moved to its leaf: the delegated cgroup is the leaf's parent.
  const dir = join(mount.point, basename(path) === EXECUTOR_LEAF ? dirname(path) : path);
  let available: string[];
  try {
    available = readFileSync(join(dir, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
  } catch (e) {
    return { reason: `cgroup v2: cannot read ${join(dir, 'cgroup.controllers')}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
  }
  const missing = ['memory', 'pids'].filter((c) => !available.includes(c));
  if (missing.length > 0) return { reason: `cgroup v2: the controllers ${missing.join(', ')} are not delegated to this process's cgroup ${dir}` };
  if (!writable(dir) || !writable(join(dir, 'cgroup.subtree_control')))
    return { reason: `cgroup v2: this process may not write its cgroup ${dir} (not delegated)` };
  try {
    enableV2Controllers(dir, available);
    return ActionCgroups.create(2, [join(dir, `kiln-${name}`)]);
  } catch (e) {
    return { reason: `cgroup v2: cannot make action cgroups under ${dir}: ${(e as Error).message}` };
  }
}

/** Where the executor's own processes go in a delegated v2 cgroup. */
const EXECUTOR_LEAF = 'kiln-executor';

/**
 * v2 lets a cgroup hand controllers to its children only while it holds no process itself: the
 * executor's processes move to a leaf of their own (`kiln-executor`) first, as a delegated service
 * manager does.
 */
function enableV2Controllers(dir: string, available: readonly string[]): void {
  const enabled = readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8')
    .trim()
    .split(/\s+/)
    .map((c) => c.replace(/^\+/, ''));
  const wanted = ['memory', 'pids', 'cpu'].filter((c) => available.includes(c) && !enabled.includes(c));
  if (wanted.length === 0) return;
  const leaf = join(dir, EXECUTOR_LEAF);
  mkdirSync(leaf, { recursive: true });
  for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
    try {
      writeFileSync(join(leaf, 'cgroup.procs'), pid);
    } catch (e) {
      // Gone meanwhile.
      if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
    }
  }
  writeFileSync(join(dir, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
}

/** Enables for the cgroup's children the limiting controllers it has itself. */
function enableForChildren(dir: string): void {
  const available = readFileSync(join(dir, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
  const wanted = ['memory', 'pids', 'cpu'].filter((c) => available.includes(c));
  if (wanted.length > 0) writeFileSync(join(dir, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
}

function openV1(name: string, own: Map<string, string>, mounts: { point: string; fstype: string; options: string[] }[]): ActionCgroups | { reason: string } {
  const parents: string[] = [];
  for (const controller of ['memory', 'pids', 'cpu']) {
    const mount = mounts.find((m) => m.fstype === 'cgroup' && m.options.includes(controller));
    const path = own.get(controller);
    if (!mount || path === undefined) {
      if (controller === 'cpu') continue;
      return { reason: `cgroup v1: no ${controller} hierarchy is mounted` };
    }
    const dir = join(mount.point, path);
    if (!writable(dir)) return { reason: `cgroup v1: this process may not write its ${controller} cgroup ${dir} (it needs root)` };
    // Controllers mounted together (cpu,cpuacct) share one directory.
    const parent = join(dir, `kiln-${name}`);
    if (!parents.includes(parent)) parents.push(parent);
  }
  try {
    return ActionCgroups.create(1, parents);
  } catch (e) {
    return { reason: `cgroup v1: cannot make action cgroups: ${(e as Error).message}` };
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

const CPU_PERIOD_US = 100_000;

/**
 * Writes each limit into the action's directory that has its file (in v1 each hierarchy's directory
 * holds only its own controller's files). Memory and pids limits must land somewhere: a cgroup
 * without them would run the action unlimited while claiming otherwise. The CPU limit and the swap
 * limit apply where the kernel offers them (the cpu controller, swap accounting).
 */
function writeLimits(version: 1 | 2, dirs: readonly string[], limits: ResourceLimits): void {
  const write = (file: string, value: string, required: boolean): void => {
    const where = dirs.filter((dir) => existsSync(join(dir, file)));
    if (where.length === 0 && required) throw new Error(`cannot limit the action: its cgroup has no ${file} (is the controller enabled?)`);
    for (const dir of where) writeFileSync(join(dir, file), value);
  };
  const quota = limits.cpus === 0 ? undefined : Math.max(1000, Math.round(limits.cpus * CPU_PERIOD_US));
  if (version === 2) {
    if (limits.memoryBytes) {
      write('memory.max', String(limits.memoryBytes), true);
      write('memory.swap.max', '0', false);
    }
    if (limits.pids) write('pids.max', String(limits.pids), true);
    if (quota) write('cpu.max', `${quota} ${CPU_PERIOD_US}`, false);
    return;
  }
  if (limits.memoryBytes) {
    write('memory.limit_in_bytes', String(limits.memoryBytes), true);
    // Memory plus swap equal to memory: no swap.
    write('memory.memsw.limit_in_bytes', String(limits.memoryBytes), false);
  }
  if (limits.pids) write('pids.max', String(limits.pids), true);
  if (quota) {
    write('cpu.cfs_period_us', String(CPU_PERIOD_US), false);
    write('cpu.cfs_quota_us', String(quota), false);
  }
}

function oomKilled(version: 1 | 2, dir: string): boolean {
  const file = join(dir, version === 2 ? 'memory.events' : 'memory.oom_control');
  try {
    const m = /^oom_kill (\d+)$/m.exec(readFileSync(file, 'utf8'));
    return m !== null && Number(m[1]) > 0;
  } catch {
    return false;
  }
}

/** Kills every process left in the cgroup (the action's group is already killed; stragglers may be exiting). */
function killMembers(dir: string): void {
  try {
    if (existsSync(join(dir, 'cgroup.kill'))) {
      writeFileSync(join(dir, 'cgroup.kill'), '1');
      return;
    }
    for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Exited meanwhile.
      }
    }
  } catch {
    // The directory is gone.
  }
}

/** Kills what is left in the cgroup and removes it: true when it is gone, false while it is still busy. */
function tryRemoveCgroup(dir: string): boolean {
  killMembers(dir);
  try {
    rmdirSync(dir);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return true;
    if (code !== 'EBUSY') throw e;
    return false;
  }
}

/** rmdir fails with EBUSY while a killed process has not finished exiting: a few milliseconds. */
const REMOVE_ATTEMPTS = 200;
const REMOVE_PAUSE_MS = 5;

async function removeCgroup(dir: string): Promise<void> {
  for (let attempt = 0; !tryRemoveCgroup(dir); attempt++) {
    if (attempt >= REMOVE_ATTEMPTS) throw new Error(`cannot remove the cgroup ${dir}: processes are still in it`);
    await new Promise((resolve) => setTimeout(resolve, REMOVE_PAUSE_MS));
  }
}

/** For start and close, when no action runs: the wait is rare and short. */
function removeCgroupSync(dir: string): void {
  for (let attempt = 0; !tryRemoveCgroup(dir); attempt++) {
    if (attempt >= REMOVE_ATTEMPTS) throw new Error(`cannot remove the cgroup ${dir}: processes are still in it`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, REMOVE_PAUSE_MS);
  }
}
