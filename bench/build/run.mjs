#!/usr/bin/env node
// Build benchmark: in one run, on the workspace of bench/build/generate.mjs, times
//   - the spawn floor: as many `bash -c true` as the build has actions, --jobs at a time, and the same
//     inside Kiln's native sandbox (the sandboxed strategy's floor) and inside bubblewrap;
//   - Kiln: cold build (empty output base) with the default strategy and with --spawn_strategy=local,
//     null build, and the rebuild after one leaf source changed — each a new process, no server;
//   - Bazel 2.1.0 (no convenience symlinks, so one run does not load the last one's output tree): cold with --batch (default strategy and local), cold with its server, then the
//     null build and the one-leaf rebuild against the warm server, and the server's peak RSS;
// and prints the goal ratios and Kiln's per-action overhead over the floor.
//
//   node bench/build/run.mjs [--sizes=1000] [--kiln=PATH] [--bazel=PATH|none] [--jobs=N]
// Needs `npm run build` first. Bazel comes from KILN_BAZEL or .cache/bazel/2.1.0/bazel.
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, parseBuildBenchFlags, secs } from '../common/build-bench.mjs';
import { bazelServerPeakRssMb, measure } from '../common/measure.mjs';
import { actionCount, generateWorkspace, leafSource } from './generate.mjs';
import { nativeSandboxFloorMs, spawnFloorMs } from './spawn-floor.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '../..');

const flags = parseBuildBenchFlags(process.argv.slice(2), REPO);
const bwrap = spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim();
for (const size of flags.sizes) {
  const dir = mkdtempSync(join(tmpdir(), `kiln-bench-build-${size}-`));
  try {
    const ws = join(dir, 'ws');
    generateWorkspace(ws, size);
    // Every genrule once in the target configuration, the tool once more in the exec configuration.
    const actions = actionCount(size);
    const jobs = `--jobs=${flags.jobs}`;
    const floor = await spawnFloorMs(actions, flags.jobs);
    const bwrapFloor = bwrap
      ? await spawnFloorMs(actions, flags.jobs, [
          bwrap,
          '--unshare-all',
          '--die-with-parent',
          '--ro-bind',
          '/',
          '/',
          '--dev',
          '/dev',
          '--proc',
          '/proc',
          'bash',
          '-c',
          'true',
        ])
      : NaN;
    const sandboxFloor = await nativeSandboxFloorMs(actions, flags.jobs);
    // The genrules' own shape: Bash running one more program, with nothing of any build tool around it.
    const commandFloor = await spawnFloorMs(actions, flags.jobs, ['bash', '-c', 'set -e -o pipefail; cat /dev/null > /dev/null']);
    console.log(`${size} packages, ${actions} actions, ${flags.jobs} at a time`);
    console.log(
      `  spawn floor: bash -c true ${secs(floor)} (${(floor / actions).toFixed(2)} ms each); in Kiln's native sandbox ${secs(sandboxFloor)}; in bubblewrap ${secs(bwrapFloor)}`,
    );
    console.log(`  command floor: bash running cat, as the genrules do, ${secs(commandFloor)} (${(commandFloor / actions).toFixed(2)} ms each)`);

    const kiln = (base, ...args) => measure([flags.kiln, 'build', `--output_base=${join(dir, base)}`, jobs, ...args, '//...'], ws);
    const kilnCold = kiln('kiln-ob');
    const kilnNull = kiln('kiln-ob');
    appendFileSync(join(ws, leafSource(5)), 'changed by the benchmark\n');
    const kilnLeaf = kiln('kiln-ob');
    const kilnLocal = kiln('kiln-ob-local', '--spawn_strategy=local');
    console.log(`  kiln cold (default strategy)   ${fmt(kilnCold)}`);
    console.log(`  kiln cold (local)              ${fmt(kilnLocal)}`);
    console.log(`  kiln null build                ${fmt(kilnNull)}`);
    console.log(`  kiln one leaf changed          ${fmt(kilnLeaf)}`);
    const overhead = (m, f) => `${((m.ms - f) / actions).toFixed(2)} ms/action, ${(m.ms / f).toFixed(2)}x the floor`;
    console.log(
      `  per-action overhead over the spawn floor: local ${overhead(kilnLocal, floor)}, sandboxed ${overhead(kilnCold, floor)} (goal <= 2x); ` +
        `sandboxed over the native sandbox floor ${overhead(kilnCold, sandboxFloor)}`,
    );

    if (flags.bazel) {
      const bazel = (base, startup, ...args) =>
        measure([flags.bazel, `--output_base=${join(dir, base)}`, ...startup, 'build', jobs, '--symlink_prefix=/', ...args, '//...'], ws);
      const batch = bazel('bazel-batch', ['--batch']);
      const batchLocal = bazel('bazel-batch-local', ['--batch'], '--spawn_strategy=local');
      const cold = bazel('bazel-server', []);
      const warmNull = bazel('bazel-server', []);
      appendFileSync(join(ws, leafSource(5)), 'changed again for bazel\n');
      const warmLeaf = bazel('bazel-server', []);
      const serverRss = bazelServerPeakRssMb(join(dir, 'bazel-server'));
      spawnSync(flags.bazel, [`--output_base=${join(dir, 'bazel-server')}`, 'shutdown'], { cwd: ws });
      console.log(`  bazel --batch cold (default)   ${fmt(batch)}`);
      console.log(`  bazel --batch cold (local)     ${fmt(batchLocal)}`);
      console.log(`  bazel server cold              ${fmt(cold)}; server peak RSS ${serverRss.toFixed(0)} MB`);
      console.log(`  bazel warm null build          ${fmt(warmNull)}`);
      console.log(`  bazel warm one leaf changed    ${fmt(warmLeaf)}`);
      const kilnPeak = Math.max(kilnCold.rssMb, kilnNull.rssMb, kilnLeaf.rssMb, kilnLocal.rssMb);
      console.log(
        `  ratios: kiln cold / bazel --batch cold = ${(kilnCold.ms / batch.ms).toFixed(3)} (default strategies), ` +
          `${(kilnLocal.ms / batchLocal.ms).toFixed(3)} (local) (goal <= 0.333); ` +
          `kiln null / bazel warm null = ${(kilnNull.ms / warmNull.ms).toFixed(2)} (goal <= 1); ` +
          `kiln one leaf / bazel warm one leaf = ${(kilnLeaf.ms / warmLeaf.ms).toFixed(2)} (goal <= 1); ` +
          `kiln peak RSS / bazel server peak RSS = ${(kilnPeak / serverRss).toFixed(2)} (goal <= 0.333)`,
      );
      console.log(
        `  the command floor alone / bazel --batch cold = ${(commandFloor / batch.ms).toFixed(3)} (default), ${(commandFloor / batchLocal.ms).toFixed(3)} (local); ` +
          `the native sandbox floor / bazel --batch cold (default) = ${(sandboxFloor / batch.ms).toFixed(3)}; the bubblewrap floor = ${(bwrapFloor / batch.ms).toFixed(3)}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
