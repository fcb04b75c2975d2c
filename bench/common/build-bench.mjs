// What the build benchmarks (bench/build, bench/starlark-rules) share: their command line and the
// way they print one measured build.
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { defaultBazel } from './measure.mjs';

/** `--sizes=1000,5000 --kiln=PATH --bazel=PATH|none --jobs=N --rounds=N`, with defaults from the repository. */
export function parseBuildBenchFlags(argv, repo) {
  const flags = { sizes: [1000], kiln: join(repo, 'bin/kiln'), bazel: defaultBazel(repo), jobs: availableParallelism(), rounds: 2 };
  for (const a of argv) {
    const m = /^--(sizes|kiln|bazel|jobs|rounds)=(.+)$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}`);
    if (m[1] === 'sizes') flags.sizes = m[2].split(',').map(Number);
    else if (m[1] === 'jobs' || m[1] === 'rounds') flags[m[1]] = Number(m[2]);
    else flags[m[1]] = m[1] === 'bazel' && m[2] === 'none' ? null : m[2];
  }
  return flags;
}

/** The `INFO: N processes: ...` line both tools print, or '?' when absent. */
export const processesLine = (m) => /INFO: (\d+ processes[^\n]*)/.exec(m.stderr)?.[1] ?? '?';
export const secs = (ms) => `${(ms / 1000).toFixed(2)} s`;
/** One measured command: wall time, CPU, peak RSS and the processes line. */
export const fmt = (m) => `${secs(m.ms)} wall, ${m.cpuS.toFixed(1)} s CPU, ${m.rssMb.toFixed(0)} MB (${processesLine(m)})`;
