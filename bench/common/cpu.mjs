// CPU accounting shared by the benchmarks, from /proc (Linux; USER_HZ is 100 on our kernels).
import { readFileSync } from 'node:fs';

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
