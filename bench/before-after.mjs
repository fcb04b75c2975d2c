#!/usr/bin/env node
// Before/after comparison of two Kiln builds on the loading and build benchmarks' workspaces: the
// two launchers alternate run by run (so a busy neighbour slows both alike) and medians are printed.
// Each launcher is a checkout's bin/kiln after `npm run build`, e.g. a worktree of the base commit.
//
//   node bench/before-after.mjs --before=/work/wt/base/bin/kiln --after=bin/kiln
//        [--loading=1000,5000] [--build=1000] [--starlark] [--rounds=3] [--jobs=N]
//
// loading: `kiln query //...` cold (fresh output base) and cached (second run), per size;
// build: `kiln build //...` cold (default strategy, fresh output base) and null, per size;
// starlark: `kiln starlark` on each program of bench/starlark, and the geometric mean of after/before.
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measure } from './common/measure.mjs';
import { generateWorkspace as generateLoading } from './loading/generate.mjs';
import { generateWorkspace as generateBuild } from './build/generate.mjs';
import { bigDictProgram, callChainProgram } from './starlark/generate.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

const flags = { before: null, after: null, loading: [], build: [], starlark: false, rounds: 3, jobs: availableParallelism() };
for (const a of process.argv.slice(2)) {
  if (a === '--starlark') {
    flags.starlark = true;
    continue;
  }
  const m = /^--(before|after|loading|build|rounds|jobs)=(.+)$/.exec(a);
  if (!m) throw new Error(`unknown argument ${a}`);
  if (m[1] === 'loading' || m[1] === 'build') flags[m[1]] = m[2].split(',').map(Number);
  else if (m[1] === 'rounds' || m[1] === 'jobs') flags[m[1]] = Number(m[2]);
  else flags[m[1]] = resolve(m[2]);
}
if (!flags.before || !flags.after) throw new Error('--before=PATH and --after=PATH are required');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const summary = (runs) =>
  `${median(runs.map((r) => r.ms / 1000)).toFixed(2)} s wall, ${median(runs.map((r) => r.cpuS)).toFixed(2)} s CPU, ${median(runs.map((r) => r.rssMb)).toFixed(0)} MB`;

/** Runs `cold` then `warm` for each launcher, alternating, `rounds` times; prints medians. */
function compare(title, dir, cold, warm) {
  const runs = { before: { cold: [], warm: [] }, after: { cold: [], warm: [] } };
  for (let round = 0; round < flags.rounds; round++) {
    for (const which of ['before', 'after']) {
      const base = join(dir, `${which}-${round}`);
      runs[which].cold.push(cold(flags[which], base));
      runs[which].warm.push(warm(flags[which], base));
      rmSync(base, { recursive: true, force: true });
    }
  }
  for (const which of ['before', 'after']) {
    console.log(`${title} ${which.padEnd(6)} cold ${summary(runs[which].cold)}; second run ${summary(runs[which].warm)} (medians of ${flags.rounds})`);
  }
}

for (const size of flags.loading) {
  const dir = mkdtempSync(join(tmpdir(), `kiln-before-after-loading-${size}-`));
  try {
    const ws = join(dir, 'ws');
    generateLoading(ws, size);
    const query = (kiln, base) => measure([kiln, 'query', `--output_base=${base}`, '//...'], ws);
    compare(`loading ${size}:`, dir, query, query);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const size of flags.build) {
  const dir = mkdtempSync(join(tmpdir(), `kiln-before-after-build-${size}-`));
  try {
    const ws = join(dir, 'ws');
    generateBuild(ws, size);
    const build = (kiln, base) => measure([kiln, 'build', `--output_base=${base}`, `--jobs=${flags.jobs}`, '//...'], ws);
    compare(`build ${size}:`, dir, build, build);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (flags.starlark) {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-before-after-starlark-'));
  try {
    const names = readdirSync(join(HERE, 'starlark/programs')).filter((f) => f.endsWith('.star'));
    for (const f of names) copyFileSync(join(HERE, 'starlark/programs', f), join(dir, f));
    writeFileSync(join(dir, 'big_dict.star'), bigDictProgram());
    writeFileSync(join(dir, 'call_chain.star'), callChainProgram());
    const ratios = { wall: [], cpu: [], rss: [] };
    for (const program of [...names, 'big_dict.star', 'call_chain.star'].sort()) {
      const runs = { before: [], after: [] };
      for (let round = 0; round < flags.rounds; round++) {
        for (const which of ['before', 'after']) runs[which].push(measure([flags[which], 'starlark', program], dir));
      }
      const m = (which, key) => median(runs[which].map((r) => r[key]));
      ratios.wall.push(m('after', 'ms') / m('before', 'ms'));
      ratios.cpu.push(m('after', 'cpuS') / m('before', 'cpuS'));
      ratios.rss.push(m('after', 'rssMb') / m('before', 'rssMb'));
      console.log(`starlark ${program.padEnd(20)} before ${summary(runs.before)}; after ${summary(runs.after)}`);
    }
    const geomean = (xs) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);
    console.log(
      `starlark geometric mean after/before: wall ${geomean(ratios.wall).toFixed(3)}, CPU ${geomean(ratios.cpu).toFixed(3)}, peak RSS ${geomean(ratios.rss).toFixed(3)} (medians of ${flags.rounds})`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
