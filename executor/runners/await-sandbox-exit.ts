import { readdir, readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/** How long a killed sandbox may take to die before the runner stops waiting (collection is safe either way). */
const MAX_WAIT_MS = 5000;

/**
 * Waits until the sandbox that ran in `buildDirectory` is gone, every process of it. After a timeout
 * or cancel the runner kills bwrap; the sandbox's init (pid 1 of its pid namespace, a fork of bwrap
 * in a session of its own) gets SIGKILL as bwrap dies, and as it exits the kernel kills every other
 * process of the namespace and waits for them. So: wait while a bwrap process names the build
 * directory (the init not yet exiting), or while any bwrap process is exiting and not yet a zombie
 * (its command line is already empty then: this may be another sandbox's init, which costs only the
 * moment it needs to finish). Node cannot wait on a process it did not start: /proc is polled, only
 * on this path. True when the sandbox is gone.
 */
export async function awaitSandboxExit(bwrapPath: string, buildDirectory: string): Promise<boolean> {
  const marker = Buffer.from(`\0${buildDirectory}\0`);
  const comm = basename(bwrapPath).slice(0, 15);
  const deadline = Date.now() + MAX_WAIT_MS;
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    if (!(await sandboxProcessRemains(comm, marker))) return true;
    if (Date.now() > deadline) return false;
    await delay(pause);
  }
}

async function sandboxProcessRemains(comm: string, marker: Buffer): Promise<boolean> {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    // "pid (comm) state ...": comm and state outlive the command line while a process exits.
    const stat = await readFile(`/proc/${pid}/stat`, 'latin1').catch(() => '');
    const close = stat.lastIndexOf(')');
    if (close < 0 || stat.slice(stat.indexOf('(') + 1, close) !== comm) continue;
    const state = stat.charAt(close + 2);
    if (state === 'Z' || state === 'X') continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`).catch(() => undefined);
    if (cmdline === undefined) continue;
    if (cmdline.length === 0 || cmdline.includes(marker)) return true;
  }
  return false;
}
