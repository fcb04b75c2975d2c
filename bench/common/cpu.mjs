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

/** The live processes below `pid` (children, their children, ...), from /proc/PID/task/TID/children. */
function descendants(pid) {
  const found = [];
  const visit = (p) => {
    let tasks = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return; // gone meanwhile
    }
    for (const tid of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const child of children.split(' ').filter(Boolean)) {
        found.push(Number(child));
        visit(Number(child));
      }
    }
  };
  visit(pid);
  return found;
}

/** User and system CPU seconds of a process (`own`) and of the children it has reaped (`reaped`). */
function cpuFields(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { own: (Number(f[11]) + Number(f[12])) / 100, reaped: (Number(f[13]) + Number(f[14])) / 100 };
}

/**
 * CPU seconds spent below a live process so far: the children it has reaped, and each live descendant
 * with the children that one has reaped, so processes that came and went count through their reaper.
 * For the cluster: its sandbox helper and every action the helper ran.
 */
export function descendantsCpuS(pid) {
  let total = cpuFields(pid).reaped;
  for (const child of descendants(pid)) {
    try {
      const { own, reaped } = cpuFields(child);
      total += own + reaped;
    } catch {
      // exited between the listing and the read: its reaper counts it from now on
    }
  }
  return total;
}
