// Shared by the side-by-side benchmarks: runs a command under GNU time and reads back wall time, CPU
// time and peak RSS; reads a Bazel server's peak RSS, which `time` cannot see (it measures the client).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const GNU_TIME = ['/usr/bin/time', '/bin/time'].find((p) => existsSync(p));

/**
 * Runs `argv` in `cwd`; throws unless it exits with one of `okStatuses`. Returns wall ms, CPU seconds
 * (user + sys of the process tree: on a shared machine wall time mostly measures the neighbours), peak
 * RSS in MB (NaN without GNU time) and stdout/stderr.
 */
export function measure(argv, cwd, { okStatuses = [0], env } = {}) {
  const timeFile = join(cwd, '.bench-time');
  const full = GNU_TIME ? [GNU_TIME, '-f', '%M %U %S', '-o', timeFile, ...argv] : argv;
  const start = process.hrtime.bigint();
  const r = spawnSync(full[0], full.slice(1), { cwd, encoding: 'utf8', maxBuffer: 256 << 20, env: env ?? process.env });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (!okStatuses.includes(r.status)) throw new Error(`${argv.join(' ')} exited ${r.status}:\n${r.stderr}`);
  const [rssKb, user, sys] = GNU_TIME ? readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(' ').map(Number) : [NaN, NaN, NaN];
  return { ms, rssMb: rssKb / 1024, cpuS: user + sys, status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The Bazel server's peak RSS (VmHWM) in MB; call it before the server is shut down. */
export function bazelServerPeakRssMb(outputBase) {
  try {
    const pid = readFileSync(join(outputBase, 'server/server.pid.txt'), 'utf8').trim();
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kb ? Number(kb[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Bazel 2.1.0 from KILN_BAZEL or the copy scripts/test-setup.d/30-bazel.sh installs; null if absent. */
export function defaultBazel(repo) {
  const path = process.env.KILN_BAZEL ?? join(repo, '.cache/bazel/2.1.0/bazel');
  return existsSync(path) ? path : null;
}
