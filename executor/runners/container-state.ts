import { lstatSync, readFileSync } from 'node:fs';

/**
 * What the host sees of a warm container without asking the engine: its processes (the pids of its
 * cgroup) and the change times of the directories an action could write outside its build
 * directory. The root file system is read-only, so those are the container's tmpfs mounts (`/tmp`,
 * `/dev`, `/dev/shm`, `/dev/mqueue`, reached through `/proc/<init>/root`) and its mount directory on
 * the host. A directory's mtime or ctime moves whenever an entry is made, removed or renamed in it,
 * and on chmod/chown; two lstat calls per directory answer "did anything change".
 */
export interface ContainerSnapshot {
  readonly stamps: readonly string[];
}

/** The container-side directories an action could change (the root file system is read-only). */
const WRITABLE_IN_CONTAINER = ['/tmp', '/dev', '/dev/shm', '/dev/mqueue'];

/**
 * A file of the container's cgroup on the host (the container's init has host pid `initPid`):
 * `controller` names the cgroup v1 hierarchy; under v2 the one unified hierarchy holds it.
 */
export function containerCgroupFile(initPid: number, controller: 'pids' | 'memory', file: { v1: string; v2: string }): string | undefined {
  let lines: string[];
  try {
    lines = readFileSync(`/proc/${initPid}/cgroup`, 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const tag = `:${controller}:`;
  const v1 = lines.find((l) => /^\d+:/.test(l) && l.includes(tag));
  if (v1) return `/sys/fs/cgroup/${controller}${v1.slice(v1.indexOf(tag) + tag.length)}/${file.v1}`;
  const v2 = lines.find((l) => l.startsWith('0::'));
  return v2 ? `/sys/fs/cgroup${v2.slice(3)}/${file.v2}` : undefined;
}

/** The cgroup.procs file listing every process of the container. */
export function containerProcessesFile(initPid: number): string | undefined {
  return containerCgroupFile(initPid, 'pids', { v1: 'cgroup.procs', v2: 'cgroup.procs' });
}

/** The file counting the container's OOM kills (`oom_kill N`): Docker flags OOMKilled only for the init, not for an exec. */
export function containerOomFile(initPid: number): string | undefined {
  return containerCgroupFile(initPid, 'memory', { v1: 'memory.oom_control', v2: 'memory.events' });
}

/** How many processes of the container the kernel killed for memory so far; undefined when unreadable. */
export function containerOomKills(oomFile: string): number | undefined {
  try {
    const match = /^oom_kill (\d+)$/m.exec(readFileSync(oomFile, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The pids in the container now, or undefined when they cannot be read (then nothing can be vouched for). */
export function containerProcesses(processesFile: string): number[] | undefined {
  try {
    return readFileSync(processesFile, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return undefined;
  }
}

/** Stamps of the writable directories; undefined when one cannot be read (the executor lacks the rights). */
export function snapshotContainer(initPid: number, mountDirectory: string): ContainerSnapshot | undefined {
  const stamps: string[] = [];
  for (const path of [mountDirectory, ...WRITABLE_IN_CONTAINER.map((d) => `/proc/${initPid}/root${d}`)]) {
    try {
      const s = lstatSync(path, { bigint: true });
      stamps.push(`${path} ${s.ino} ${s.mode} ${s.uid} ${s.gid} ${s.mtimeNs} ${s.ctimeNs} ${s.nlink}`);
    } catch {
      return undefined;
    }
  }
  return { stamps };
}

/** Whether the container looks now exactly as in `before` and runs only its init. */
export function containerUnchanged(before: ContainerSnapshot, initPid: number, mountDirectory: string, processesFile: string): boolean {
  const pids = containerProcesses(processesFile);
  if (pids?.length !== 1 || pids[0] !== initPid) return false;
  const now = snapshotContainer(initPid, mountDirectory);
  return now?.stamps.every((stamp, i) => stamp === before.stamps[i]) === true;
}
