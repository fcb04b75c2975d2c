#!/usr/bin/env node
// Starlark-rule build benchmark: on bench/starlark-rules/generate.mjs's workspace (the build
// benchmark's, every target a Starlark rule doing ctx.actions.run_shell), times in one run
//   - Kiln: analysis alone (`--nobuild`) of the Starlark workspace and of the genrule one, a cold
//     build with the default strategy, the null build — each a new process, no server;
//   - Bazel 2.1.0: cold `--batch` builds, alternating with Kiln's cold builds (`--rounds`, default 2),
//     then a cold build with its server and the null build against the warm server;
// and prints the goal ratios: Kiln cold / Bazel --batch cold (goal <= 1/3), Kiln null / Bazel warm
// null (goal <= 1), Kiln analysis of Starlark rules / of genrules (goal <= 1.5). It also runs the
// actions' commands alone, as many at a time (bench/common/process-floor.mjs): their wall time over
// Bazel's is the lowest cold ratio any tool could reach on the machine.
//
//   node bench/starlark-rules/run.mjs [--sizes=1000] [--kiln=PATH] [--bazel=PATH|none] [--jobs=N] [--rounds=N]
// Needs `npm run build` first. Bazel comes from KILN_BAZEL or .cache/bazel/2.1.0/bazel.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, parseBuildBenchFlags } from '../common/build-bench.mjs';
import { bazelServerPeakRssMb, measure } from '../common/measure.mjs';
import { processFloor } from '../common/process-floor.mjs';
import { generateWorkspace as generateGenrules } from '../build/generate.mjs';
import { ACTIONS_PER_PACKAGE, generateWorkspace } from './generate.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const flags = parseBuildBenchFlags(process.argv.slice(2), REPO);
for (const size of flags.sizes) {
  const dir = mkdtempSync(join(tmpdir(), `kiln-bench-starlark-rules-${size}-`));
  try {
    const ws = join(dir, 'ws');
    const genrules = join(dir, 'genrules');
    generateWorkspace(ws, size);
    generateGenrules(genrules, size);
    const jobs = `--jobs=${flags.jobs}`;
    console.log(`${size} packages, ${size * ACTIONS_PER_PACKAGE + 2} actions, ${flags.jobs} at a time`);

    const kiln = (root, base, ...args) => measure([flags.kiln, 'build', `--output_base=${join(dir, base)}`, jobs, ...args, '//...'], root);
    const bazel = (base, startup) => measure([flags.bazel, `--output_base=${join(dir, base)}`, ...startup, 'build', jobs, '--symlink_prefix=/', '//...'], ws);
    const median = (runs) => [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)];
    // Analysis alone, in alternation; the cache of packages is warm from the second pair on.
    const ratios = [];
    for (let i = 0; i < 2; i++) {
      const s = kiln(ws, `kiln-analysis-${i}`, '--nobuild');
      const g = kiln(genrules, `kiln-analysis-genrules-${i}`, '--nobuild');
      ratios.push(s.ms / g.ms);
      console.log(`  kiln analysis #${i + 1}: Starlark rules ${fmt(s)}; genrules ${fmt(g)}; ratio ${(s.ms / g.ms).toFixed(2)} (goal <= 1.5)`);
    }
    // Cold builds, Kiln and Bazel --batch alternating, each from a fresh output base.
    const colds = [];
    for (let round = 0; round < flags.rounds; round++) {
      const k = kiln(ws, `kiln-cold-${round}`);
      console.log(`  kiln cold #${round + 1} (default strategy)   ${fmt(k)}`);
      if (!flags.bazel) continue;
      const b = bazel(`bazel-batch-${round}`, ['--batch']);
      console.log(`  bazel --batch cold #${round + 1}            ${fmt(b)}; ratio ${(k.ms / b.ms).toFixed(3)} (goal <= 0.333)`);
      colds.push([k, b]);
    }
    // What the actions' processes alone cost here, as many at a time as the builds run: the bound
    // under every tool's cold build.
    const floor = processFloor(dir, size, flags.jobs);
    const perAction = (cpuS) => `${((cpuS * 1000) / (size * ACTIONS_PER_PACKAGE + 2)).toFixed(1)} ms`;
    console.log(
      `  process floor (the actions' commands alone, ${flags.jobs} at a time) ${(floor.ms / 1000).toFixed(2)} s wall, ${floor.cpuS.toFixed(1)} s CPU: ${perAction(floor.cpuS)} CPU per action`,
    );
    for (const [k, b] of colds) {
      console.log(
        `    CPU per action: kiln ${perAction(k.cpuS)}, bazel ${perAction(b.cpuS)}; kiln / floor wall = ${(k.ms / floor.ms).toFixed(2)}; ` +
          `floor / bazel wall = ${(floor.ms / b.ms).toFixed(3)} (the lowest cold ratio any tool could reach here)`,
      );
    }
    const kilnNull = median([0, 1, 2].map(() => kiln(ws, 'kiln-cold-0')));
    console.log(`  kiln null build (median of 3)  ${fmt(kilnNull)}`);

    if (flags.bazel) {
      const cold = bazel('bazel-server', []);
      console.log(`  bazel server cold              ${fmt(cold)}`);
      const warmNull = median([0, 1, 2].map(() => bazel('bazel-server', [])));
      const serverRss = bazelServerPeakRssMb(join(dir, 'bazel-server'));
      spawnSync(flags.bazel, [`--output_base=${join(dir, 'bazel-server')}`, 'shutdown'], { cwd: ws });
      console.log(`  bazel warm null (median of 3)  ${fmt(warmNull)}; server peak RSS ${serverRss.toFixed(0)} MB`);
      const coldRatio = colds.map(([k, b]) => k.ms / b.ms);
      console.log(
        `  ratios: kiln cold / bazel --batch cold = ${coldRatio.map((r) => r.toFixed(3)).join(', ')} (goal <= 0.333); ` +
          `kiln null / bazel warm null = ${(kilnNull.ms / warmNull.ms).toFixed(2)} (goal <= 1); ` +
          `analysis = ${ratios.map((r) => r.toFixed(2)).join(', ')} (goal <= 1.5)`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
