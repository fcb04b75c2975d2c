#!/usr/bin/env node
// Test benchmark: in one run, on the workspace of bench/test/generate.mjs (N trivial sh_tests), times
//   - Kiln (each command a new process, no server): cold `kiln test //...` with the default strategy
//     and with --spawn_strategy=local, the fully cached run, and the run after one test changed;
//   - the reference Bazel (4.2.3, ../shared/reference-bazel/bazel4, the one that runs sh_test offline):
//     cold `bazel --batch test //...`, cold with its server, then the fully cached run against the warm
//     server;
// and prints the goals' ratios: Kiln cold <= 1/3 of Bazel's --batch cold, Kiln's fully cached run no
// slower than Bazel's warm one and <= 1/10 of Kiln's own cold run.
//
//   node bench/test/run.mjs [--tests=1000] [--kiln=PATH] [--bazel=PATH|none] [--jobs=N] [--repeat=3]
// Needs `npm run build` first. Bazel comes from KILN_REF_BAZEL4 or ../shared/reference-bazel/bazel4.
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measure } from '../common/measure.mjs';
import { generateWorkspace, testSource } from './generate.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '../..');

function parseFlags(argv) {
  // shared/ lies beside the main checkout, and two levels up from an engineer's worktree.
  const fallback = ['../shared', '../../shared'].map((s) => resolve(REPO, s, 'reference-bazel/bazel4')).find((p) => existsSync(p));
  const flags = {
    tests: 1000,
    kiln: join(REPO, 'bin/kiln'),
    bazel: process.env.KILN_REF_BAZEL4 ?? fallback ?? null,
    jobs: availableParallelism(),
    repeat: 3,
  };
  for (const a of argv) {
    const m = /^--(tests|kiln|bazel|jobs|repeat)=(.+)$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}`);
    if (m[1] === 'tests' || m[1] === 'jobs' || m[1] === 'repeat') flags[m[1]] = Number(m[2]);
    else flags[m[1]] = m[1] === 'bazel' && m[2] === 'none' ? null : m[2];
  }
  return flags;
}

const secs = (ms) => `${(ms / 1000).toFixed(2)} s`;
const executed = (m) => /^Executed (\d+ out of \d+) tests?/m.exec(m.stdout ?? '')?.[1] ?? '?';
const fmt = (m) => `${secs(m.ms)} wall, ${m.cpuS.toFixed(1)} s CPU, ${m.rssMb.toFixed(0)} MB (executed ${executed(m)})`;

const flags = parseFlags(process.argv.slice(2));
const dir = mkdtempSync(join(tmpdir(), `kiln-bench-test-${flags.tests}-`));
const median = (runs) => [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)];
try {
  const ws = join(dir, 'ws');
  generateWorkspace(ws, flags.tests);
  const jobs = `--jobs=${flags.jobs}`;
  console.log(`${flags.tests} tests, ${flags.jobs} at a time; the tools alternate, cached runs are the median of ${flags.repeat}`);
  // Cold means every cache empty: a fresh output base and a fresh XDG_CACHE_HOME per output base.
  // Each run is printed as it ends, so that a long run that is stopped still leaves its figures.
  const logged = (what, m) => (console.log(`    ${what.padEnd(30)} ${fmt(m)}`), m);
  const kiln = (base, ...args) =>
    logged(
      `kiln ${base} ${args.join(' ')}`,
      measure([flags.kiln, 'test', `--output_base=${join(dir, base)}`, jobs, ...args, '//...'], ws, {
        env: { ...process.env, XDG_CACHE_HOME: join(dir, `${base}-xdg`) },
      }),
    );
  const bazelEnv = { ...process.env, KILN_REF_BAZEL_ROOT: join(dir, 'bazel-root') };
  const bazel = (base, startup) =>
    logged(
      `bazel ${base} ${startup.join(' ')}`,
      measure([flags.bazel, `--output_base=${join(dir, base)}`, ...startup, 'test', jobs, '--symlink_prefix=/', '//...'], ws, { env: bazelEnv }),
    );
  const withBazel = (run) => (flags.bazel ? run() : undefined);

  const kilnCold = kiln('kiln-ob');
  const batch = withBazel(() => bazel('bazel-batch', ['--batch']));
  const kilnLocal = kiln('kiln-ob-local', '--spawn_strategy=local');
  const bazelCold = withBazel(() => bazel('bazel-server', []));
  const kilnCachedRuns = [];
  const bazelWarmRuns = [];
  for (let i = 0; i < flags.repeat; i++) {
    kilnCachedRuns.push(kiln('kiln-ob'));
    withBazel(() => bazelWarmRuns.push(bazel('bazel-server', [])));
  }
  appendFileSync(join(ws, testSource(7)), 'echo changed\n');
  const kilnOne = kiln('kiln-ob');
  const bazelOne = withBazel(() => bazel('bazel-server', []));
  if (flags.bazel) spawnSync(flags.bazel, [`--output_base=${join(dir, 'bazel-server')}`, 'shutdown'], { cwd: ws, env: bazelEnv });

  const kilnCached = median(kilnCachedRuns);
  console.log(`  kiln cold (default strategy)   ${fmt(kilnCold)}`);
  console.log(`  kiln cold (local)              ${fmt(kilnLocal)}`);
  console.log(`  kiln fully cached              ${fmt(kilnCached)}  [${kilnCachedRuns.map((m) => secs(m.ms)).join(', ')}]`);
  console.log(`  kiln one test changed          ${fmt(kilnOne)}`);
  console.log(`  kiln cached / kiln cold = ${(kilnCached.ms / kilnCold.ms).toFixed(3)} (goal <= 0.1)`);
  if (flags.bazel) {
    const warm = median(bazelWarmRuns);
    console.log(`  bazel --batch cold             ${fmt(batch)}`);
    console.log(`  bazel server cold              ${fmt(bazelCold)}`);
    console.log(`  bazel warm fully cached        ${fmt(warm)}  [${bazelWarmRuns.map((m) => secs(m.ms)).join(', ')}]`);
    console.log(`  bazel warm one test changed    ${fmt(bazelOne)}`);
    console.log(
      `  ratios: kiln cold / bazel --batch cold = ${(kilnCold.ms / batch.ms).toFixed(3)} (goal <= 0.333); ` +
        `kiln cached / bazel warm cached = ${(kilnCached.ms / warm.ms).toFixed(2)} (goal <= 1)`,
    );
  }
} finally {
  spawnSync('chmod', ['-R', 'u+w', dir]);
  rmSync(dir, { recursive: true, force: true });
}
