#!/usr/bin/env node
// Loading benchmark: in one run, times `kiln query //...` cold (empty output base) and cached
// (second run, no server), and Bazel 2.1.0's `bazel query //...` cold (server start included),
// with --batch, and with a warm server; reports wall time, peak RSS and the goal ratios.
//
//   node bench/loading/run.mjs [--sizes=100,1000,5000] [--kiln=PATH] [--bazel=PATH|none]
// Needs `npm run build` first (bin/kiln runs dist/). Bazel comes from KILN_BAZEL or
// .cache/bazel/2.1.0/bazel (scripts/test-setup.d/30-bazel.sh); without it only Kiln is timed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bazelServerPeakRssMb, defaultBazel, measure as measureCommand } from '../common/measure.mjs';
import { generateWorkspace } from './generate.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '../..');

function parseFlags(argv) {
  const flags = { sizes: [100, 1000], kiln: join(REPO, 'bin/kiln'), bazel: defaultBazel(REPO) };
  for (const a of argv) {
    const m = /^--(sizes|kiln|bazel)=(.+)$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}`);
    flags[m[1]] = m[1] === 'sizes' ? m[2].split(',').map(Number) : m[1] === 'bazel' && m[2] === 'none' ? null : m[2];
  }
  return flags;
}

function measure(argv, cwd) {
  const m = measureCommand(argv, cwd);
  return { ...m, lines: m.stdout.split('\n').filter(Boolean).length };
}

const fmt = (m) => `${(m.ms / 1000).toFixed(2)} s wall (${m.cpuS.toFixed(2)} s CPU), ${m.rssMb.toFixed(0)} MB, ${m.lines} targets`;

const flags = parseFlags(process.argv.slice(2));
for (const size of flags.sizes) {
  const dir = mkdtempSync(join(tmpdir(), `kiln-bench-loading-${size}-`));
  try {
    const ws = join(dir, 'ws');
    generateWorkspace(ws, size);
    const kilnBase = join(dir, 'kiln-ob');
    const kilnCold = measure([flags.kiln, 'query', `--output_base=${kilnBase}`, '//...'], ws);
    const kilnCached = measure([flags.kiln, 'query', `--output_base=${kilnBase}`, '//...'], ws);
    console.log(`${size} packages: kiln cold ${fmt(kilnCold)}; kiln cached ${fmt(kilnCached)}`);
    if (flags.bazel) {
      const batchBase = join(dir, 'bazel-batch');
      const serverBase = join(dir, 'bazel-server');
      const batch = measure([flags.bazel, `--output_base=${batchBase}`, '--batch', 'query', '//...'], ws);
      const cold = measure([flags.bazel, `--output_base=${serverBase}`, 'query', '//...'], ws);
      const warm = measure([flags.bazel, `--output_base=${serverBase}`, 'query', '//...'], ws);
      const serverRssMb = bazelServerPeakRssMb(serverBase);
      spawnSync(flags.bazel, [`--output_base=${serverBase}`, 'shutdown'], { cwd: ws });
      console.log(`  bazel cold ${fmt(cold)}; --batch ${fmt(batch)}; warm ${fmt(warm)}; server peak RSS ${serverRssMb.toFixed(0)} MB`);
      console.log(
        `  ratios: kiln cold / bazel --batch = ${(kilnCold.ms / batch.ms).toFixed(3)} (goal <= 0.2); ` +
          `kiln cached / bazel warm = ${(kilnCached.ms / warm.ms).toFixed(2)} (goal <= 1); ` +
          `kiln peak RSS / bazel batch RSS = ${(Math.max(kilnCold.rssMb, kilnCached.rssMb) / batch.rssMb).toFixed(2)} (goal <= 0.33); ` +
          `kiln peak RSS / bazel server peak RSS = ${(Math.max(kilnCold.rssMb, kilnCached.rssMb) / serverRssMb).toFixed(2)}`,
      );
      if (kilnCold.lines !== batch.lines) console.log(`  NOTE: target counts differ (kiln ${kilnCold.lines}, bazel ${batch.lines})`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
