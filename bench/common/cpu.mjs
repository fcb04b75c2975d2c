// CPU accounting shared by the benchmarks, from /proc (Linux; USER_HZ is 100 on our kernels).
import { readdirSync, readFileSync } from 'node:fs';

/** Busy and idle CPU ms of the whole machine (every core), from /proc/stat. */
export function machineCpu() {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const idle = ticks[3] + ticks[4];
  return { busy: (ticks.reduce((a, b) => a + b, 0) - idle) * 10, idle: idle * 10 };
}

/** User and system CPU seconds a live process (all its threads) has used so far, from /proc/PID/stat. */
export function processCpuS(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * CPU seconds of a live process and of what runs below it: `self` (its own threads), `helpers` (its live
 * descendants' own time: a spawn server, a sandbox helper) and `reaped` (every process that came and went,
 * counted through its reaper's cutime/cstime: the actions).
 */
export function processTreeCpuS(pid) {
  const stat = (p) => {
    const f = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
    return { self: (Number(f[11]) + Number(f[12])) / 100, reaped: (Number(f[13]) + Number(f[14])) / 100 };
  };
  const childrenOf = (p) => {
    try {
      return readdirSync(`/proc/${p}/task`).flatMap((t) => readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
    } catch {
      return []; // exited meanwhile
    }
  };
  const own = stat(pid);
  const total = { self: own.self, helpers: 0, reaped: own.reaped };
  const pending = childrenOf(pid);
  while (pending.length > 0) {
    const child = pending.pop();
    try {
      const c = stat(child);
      total.helpers += c.self;
      total.reaped += c.reaped;
      pending.push(...childrenOf(child));
    } catch {
      // Ended between the listing and the read: its reaper counts it from now on.
    }
  }
  return total;
}

/** CPU seconds spent below a live process so far (see processTreeCpuS): for a cluster, its sandbox helper and every action. */
export function descendantsCpuS(pid) {
  const { helpers, reaped } = processTreeCpuS(pid);
  return helpers + reaped;
}
