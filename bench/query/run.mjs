#!/usr/bin/env node
// Query benchmark: deps(//...), rdeps(//..., leaf) and somepath(top, leaf) on generated workspaces
// (bench/loading's generator: N packages of ~10 rules, each package depending on the one before),
// each timed for Kiln cold (empty output base) and cached (second run, no server), and for Bazel
// 2.1.0 with --batch, a cold server and a warm server; prints wall time, peak RSS and the goal
// ratios (Kiln cold <= 1/5 of Bazel --batch, Kiln cached <= Bazel warm, RSS <= 1/3 of Bazel's).
//
//   node bench/query/run.mjs [--sizes=1000,5000] [--kiln=PATH] [--bazel=PATH|none] [--repeat=3]
//                            [--cold_repeat=3] [--bazel_startup=--host_jvm_args=-Xss1g]...
// --repeat: how many cached (Kiln) and warm-server (Bazel) runs, alternated; the medians are reported.
// --cold_repeat: how many cold (Kiln, each from an empty output base) and --batch (Bazel) runs, alternated.
// --bazel_startup: a startup option for every Bazel run (repeatable), e.g. a larger thread stack for
// graphs whose depth overflows Bazel's default one.
// Needs `npm run build` first (bin/kiln runs dist/). Bazel comes from KILN_BAZEL or
// .cache/bazel/2.1.0/bazel (scripts/test-setup.d/30-bazel.sh); without it only Kiln is timed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bazelServerPeakRssMb, defaultBazel, measure as measureCommand } from '../common/measure.mjs';
import { generateWorkspace } from '../loading/generate.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '../..');

function parseFlags(argv) {
  const flags = { sizes: [1000, 5000], kiln: join(REPO, 'bin/kiln'), bazel: defaultBazel(REPO), repeat: 3, coldRepeat: 3, bazelStartup: [] };
  for (const a of argv) {
    const m = /^--(sizes|kiln|bazel|repeat|cold_repeat|bazel_startup)=(.*)$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}`);
    if (m[1] === 'sizes') flags.sizes = m[2].split(',').map(Number);
    else if (m[1] === 'repeat') flags.repeat = Number(m[2]);
    else if (m[1] === 'cold_repeat') flags.coldRepeat = Number(m[2]);
    else if (m[1] === 'bazel_startup') flags.bazelStartup.push(m[2]);
    else flags[m[1]] = m[1] === 'bazel' && m[2] === 'none' ? null : m[2];
  }
  return flags;
}

/** The package of the generator's i-th package. */
const pkg = (i) => `//p${String(Math.floor(i / 100)).padStart(2, '0')}/pkg${String(i).padStart(5, '0')}`;

function measure(argv, cwd) {
  const m = measureCommand(argv, cwd);
  return { ...m, lines: m.stdout.split('\n').filter(Boolean).length };
}

/** The run with the median wall time. */
const median = (runs) => [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)];

const fmt = (m) => `${(m.ms / 1000).toFixed(2)} s wall (${m.cpuS.toFixed(2)} s CPU), ${m.rssMb.toFixed(0)} MB, ${m.lines} lines`;

const flags = parseFlags(process.argv.slice(2));
// Bazel's implicit dependencies of sh_* rules name repositories it would download; offline they are
// served by the reference Bazel's stub repositories beside the checkout (../shared/reference-bazel).
const STUBS = resolve(REPO, '../shared/reference-bazel/stubs');
const bazelStubs = existsSync(STUBS) ? ['rules_cc', 'rules_java', 'remote_coverage_tools'].map((r) => `--override_repository=${r}=${join(STUBS, r)}`) : [];
for (const size of flags.sizes) {
  const queries = {
    'deps(//...)': 'deps(//...)',
    'rdeps(//..., leaf)': `rdeps(//..., ${pkg(0)}:a.txt)`,
    'somepath(top, leaf)': `somepath(${pkg(size - 1)}:core, ${pkg(0)}:a.txt)`,
  };
  const dir = mkdtempSync(join(tmpdir(), `kiln-bench-query-${size}-`));
  try {
    const ws = join(dir, 'ws');
    generateWorkspace(ws, size);
    for (const [name, q] of Object.entries(queries)) {
      const kilnBase = (run) => join(dir, `kiln-ob-${name.replace(/\W/g, '')}-${run}`);
      // Each cold run has an output base of its own; the cached runs use the last one's.
      const kiln = (run) => measure([flags.kiln, 'query', `--output_base=${kilnBase(run)}`, q], ws);
      const cached = () => kiln(flags.coldRepeat - 1);
      if (!flags.bazel) {
        const kilnCold = median(Array.from({ length: flags.coldRepeat }, (_, i) => kiln(i)));
        const kilnCached = median(Array.from({ length: flags.repeat }, cached));
        console.log(
          `${size} packages, ${name}: kiln cold ${fmt(kilnCold)} (median of ${flags.coldRepeat}); kiln cached ${fmt(kilnCached)} (median of ${flags.repeat})`,
        );
        continue;
      }
      const batchBase = join(dir, 'bazel-batch');
      const serverBase = join(dir, 'bazel-server');
      const bazel = (base, ...startup) => measure([flags.bazel, `--output_base=${base}`, ...startup, ...flags.bazelStartup, 'query', ...bazelStubs, q], ws);
      // Cold runs alternate too: Kiln from an empty output base, Bazel with --batch (a new JVM each time).
      const coldRuns = [];
      const batchRuns = [];
      for (let i = 0; i < flags.coldRepeat; i++) {
        coldRuns.push(kiln(i));
        batchRuns.push(bazel(batchBase, '--batch'));
      }
      const kilnCold = median(coldRuns);
      const batch = median(batchRuns);
      const cold = bazel(serverBase);
      // The cached and warm runs alternate, so a busy neighbour slows both alike; medians are reported.
      const cachedRuns = [];
      const warmRuns = [];
      for (let i = 0; i < flags.repeat; i++) {
        cachedRuns.push(cached());
        warmRuns.push(bazel(serverBase));
      }
      const kilnCached = median(cachedRuns);
      const warm = median(warmRuns);
      const serverRssMb = bazelServerPeakRssMb(serverBase);
      spawnSync(flags.bazel, [`--output_base=${serverBase}`, 'shutdown'], { cwd: ws });
      console.log(
        `${size} packages, ${name}: kiln cold ${fmt(kilnCold)} (median of ${flags.coldRepeat}); kiln cached ${fmt(kilnCached)} (median of ${flags.repeat})`,
      );
      console.log(
        `  bazel --batch ${fmt(batch)} (median of ${flags.coldRepeat}); cold server ${fmt(cold)}; warm server ${fmt(warm)} (median of ${flags.repeat}); server peak RSS ${serverRssMb.toFixed(0)} MB`,
      );
      console.log(
        `  ratios: kiln cold / bazel --batch = ${(kilnCold.ms / batch.ms).toFixed(3)} (goal <= 0.2); ` +
          `kiln cached / bazel warm = ${(kilnCached.ms / warm.ms).toFixed(2)} (goal <= 1); ` +
          `kiln peak RSS / bazel batch RSS = ${(Math.max(kilnCold.rssMb, kilnCached.rssMb) / batch.rssMb).toFixed(2)} (goal <= 0.33)`,
      );
      if (kilnCold.lines !== batch.lines)
        console.log(`  NOTE: line counts differ (kiln ${kilnCold.lines}, bazel ${batch.lines}): implicit dependencies, see src/query/README.md`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
