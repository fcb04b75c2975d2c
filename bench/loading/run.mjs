#!/usr/bin/env node
// Loading benchmark: in one run, times `kiln query //...` cold (empty output base) and cached
// (second run, no server), and Bazel 2.1.0's `bazel query //...` cold (server start included),
// with --batch, and with a warm server; reports wall time, peak RSS and the goal ratios of issue 3.
//
//   node bench/loading/run.mjs [--sizes=100,1000,5000] [--kiln=PATH] [--bazel=PATH|none]
// Needs `npm run build` first (bin/kiln runs dist/). Bazel comes from KILN_BAZEL or
// .cache/bazel/2.1.0/bazel (scripts/test-setup.d/30-bazel.sh); without it only Kiln is timed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateWorkspace } from './generate.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '../..');
const GNU_TIME = ['/usr/bin/time', '/bin/time'].find((p) => existsSync(p));

function parseFlags(argv) {
  const defaultBazel = process.env.KILN_BAZEL ?? join(REPO, '.cache/bazel/2.1.0/bazel');
  const flags = { sizes: [100, 1000], kiln: join(REPO, 'bin/kiln'), bazel: existsSync(defaultBazel) ? defaultBazel : null };
  for (const a of argv) {
    const m = /^--(sizes|kiln|bazel)=(.+)$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}`);
    flags[m[1]] = m[1] === 'sizes' ? m[2].split(',').map(Number) : m[1] === 'bazel' && m[2] === 'none' ? null : m[2];
  }
  return flags;
}

function measure(argv, cwd) {
  const timeFile = join(cwd, '.bench-time');
  const full = GNU_TIME ? [GNU_TIME, '-f', '%M %U %S', '-o', timeFile, ...argv] : argv;
  const start = process.hrtime.bigint();
  const r = spawnSync(full[0], full.slice(1), { cwd, encoding: 'utf8', maxBuffer: 256 << 20 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}:\n${r.stderr}`);
  const [rssKb, user, sys] = GNU_TIME ? readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(' ').map(Number) : [NaN, NaN, NaN];
  // CPU time (user + sys) is reported too: on a shared machine wall time mostly measures the neighbours.
  return { ms, rssMb: rssKb / 1024, cpuS: user + sys, lines: r.stdout.split('\n').filter(Boolean).length };
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
      spawnSync(flags.bazel, [`--output_base=${serverBase}`, 'shutdown'], { cwd: ws });
      console.log(`  bazel cold ${fmt(cold)}; --batch ${fmt(batch)}; warm ${fmt(warm)}`);
      console.log(
        `  ratios: kiln cold / bazel --batch = ${(kilnCold.ms / batch.ms).toFixed(3)} (goal <= 0.2); ` +
          `kiln cached / bazel warm = ${(kilnCached.ms / warm.ms).toFixed(2)} (goal <= 1); ` +
          `kiln peak RSS / bazel batch RSS = ${(Math.max(kilnCold.rssMb, kilnCached.rssMb) / batch.rssMb).toFixed(2)} (goal <= 0.33; bazel server RSS not visible to time)`,
      );
      if (kilnCold.lines !== batch.lines) console.log(`  NOTE: target counts differ (kiln ${kilnCold.lines}, bazel ${batch.lines})`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
