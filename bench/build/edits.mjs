#!/usr/bin/env node
// Edit benchmark (issue 31): on the workspace of generate.mjs, after a cold build with each tool, the
// edits users make all day, each measured for Kiln (a new process, no server) and for Bazel 2.1.0's
// warm server, the tools alternated round by round, medians of --rounds:
//   null build; one leaf source changed; one BUILD file edited: a comment at its end, a genrule's
//   `cmd`, a target added; the `.bzl` macro a tenth of the packages load edited; `--define` changed
//   that no target reads.
// Prints each scenario's medians, the goal ratios (an edit at most 1/2 of Bazel's warm server and at
// most 2x Kiln's own null build), peak RSS, the on-disk size of Kiln's caches, and the load average.
//
//   node bench/build/edits.mjs [--sizes=1000] [--rounds=3] [--kiln=PATH] [--bazel=PATH|none] [--jobs=N]
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseBuildBenchFlags, secs } from '../common/build-bench.mjs';
import { bazelServerPeakRssMb, measure } from '../common/measure.mjs';
import { actionCount, generateWorkspace, leafSource, macroBzl, packagePath } from './generate.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const flags = parseBuildBenchFlags(process.argv.slice(2), REPO);
const rounds = Math.max(1, flags.rounds);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Bytes below `dir`. */
function sizeOf(dir) {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const st = statSync(join(dir, name), { throwIfNoEntry: false });
    if (!st) continue;
    total += st.isDirectory() ? sizeOf(join(dir, name)) : st.size;
  }
  return total;
}

/** The scenarios: each edits the workspace (differently every round) and says which flags the build takes. */
function scenarios(ws, size) {
  const mid = Math.floor(size / 2) + 3; // not a package that loads the macro
  const build = (i) => join(ws, packagePath(i), 'BUILD');
  return [
    { name: 'null build', edit: () => {} },
    { name: 'one leaf source changed', edit: (r, tool) => appendFileSync(join(ws, leafSource(5)), `changed ${tool} ${r}\n`) },
    { name: 'BUILD edited: a comment', edit: (r, tool) => appendFileSync(build(mid), `# a comment ${tool} ${r}\n`) },
    {
      name: "BUILD edited: a genrule's cmd",
      edit: (r, tool) =>
        writeFileSync(
          build(mid),
          readFileSync(build(mid), 'utf8').replace(/cmd = "echo package \d+ words[^"]*> \$@"/, `cmd = "echo package ${mid} words ${tool} ${r} > $@"`),
        ),
    },
    {
      name: 'BUILD edited: a target added',
      edit: (r, tool) => appendFileSync(build(mid), `\ngenrule(name = "added_${tool}_${r}", outs = ["added_${tool}_${r}.txt"], cmd = "echo added > $@")\n`),
    },
    { name: '.bzl loaded by a tenth edited', edit: (r, tool) => writeFileSync(join(ws, 'tools/macros.bzl'), macroBzl(`stamped ${tool} ${r}`)) },
    { name: '--define nobody reads changed', edit: () => {}, flags: (r) => [`--define=unread=${r}`] },
  ];
}

for (const size of flags.sizes) {
  const dir = mkdtempSync(join(tmpdir(), `kiln-bench-edits-${size}-`));
  try {
    const ws = join(dir, 'ws');
    generateWorkspace(ws, size);
    const jobs = `--jobs=${flags.jobs}`;
    const kilnBase = join(dir, 'kiln-ob');
    const bazelBase = join(dir, 'bazel-server');
    const tools = {
      kiln: (extra) => measure([flags.kiln, 'build', `--output_base=${kilnBase}`, jobs, '--spawn_strategy=local', ...extra, '//...'], ws),
      ...(flags.bazel
        ? {
            bazel: (extra) =>
              measure([flags.bazel, `--output_base=${bazelBase}`, 'build', jobs, '--spawn_strategy=local', '--symlink_prefix=/', ...extra, '//...'], ws),
          }
        : {}),
    };
    console.log(
      `${size} packages, ${actionCount(size)} actions, ${flags.jobs} at a time, ${rounds} rounds; load average at start ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const cold = {};
    for (const [tool, run] of Object.entries(tools)) {
      cold[tool] = run([]);
      console.log(`  ${tool} cold (local)  ${secs(cold[tool].ms)} wall, ${cold[tool].cpuS.toFixed(1)} s CPU, ${cold[tool].rssMb.toFixed(0)} MB`);
    }
    const results = new Map();
    for (const s of scenarios(ws, size)) {
      const times = Object.fromEntries(Object.keys(tools).map((t) => [t, { ms: [], rss: [] }]));
      for (let r = 0; r < rounds; r++) {
        // Alternate which tool goes first, so that neither always builds on a warmer page cache.
        const order = r % 2 === 0 ? Object.keys(tools) : Object.keys(tools).reverse();
        for (const tool of order) {
          s.edit(r, tool);
          const m = tools[tool](s.flags ? s.flags(r) : []);
          times[tool].ms.push(m.ms);
          times[tool].rss.push(m.rssMb);
        }
      }
      results.set(s.name, times);
      const line = Object.entries(times)
        .map(([t, v]) => `${t} ${secs(median(v.ms))} (${Math.max(...v.rss).toFixed(0)} MB)`)
        .join(', ');
      console.log(`  ${s.name.padEnd(34)} ${line}`);
    }
    const kilnNull = median(results.get('null build').kiln.ms);
    console.log('  goals: each edit <= 1/2 of Bazel warm and <= 2x Kiln null; null and leaf <= 1/2 of Bazel warm');
    for (const [name, times] of results) {
      const k = median(times.kiln.ms);
      const vsBazel = times.bazel ? ` kiln/bazel = ${(k / median(times.bazel.ms)).toFixed(2)}` : '';
      console.log(`    ${name.padEnd(34)}${vsBazel}, kiln/kiln null = ${(k / kilnNull).toFixed(2)}`);
    }
    if (flags.bazel) {
      console.log(`  bazel server peak RSS ${bazelServerPeakRssMb(bazelBase).toFixed(0)} MB`);
      spawnSync(flags.bazel, [`--output_base=${bazelBase}`, 'shutdown'], { cwd: ws });
    }
    const perThousand = (bytes) => `${(((bytes / size) * 1000) / 1e6).toFixed(1)} MB per 1,000 packages`;
    const analysis = sizeOf(join(kilnBase, 'analysis'));
    const loading = sizeOf(join(kilnBase, 'loading'));
    console.log(
      `  kiln caches on disk: analysis ${(analysis / 1e6).toFixed(1)} MB (${perThousand(analysis)}), loading ${(loading / 1e6).toFixed(1)} MB (${perThousand(loading)})`,
    );
    console.log(
      `  load average at end ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
