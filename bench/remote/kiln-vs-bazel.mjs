#!/usr/bin/env node
// Kiln's own REAPI client against Bazel 2.1.0's, on `kiln cluster up` (one fresh cluster each, same build and flags) in one run, with the build
// benchmark's workspace (bench/build/generate.mjs). For each client, each in its own checkout and
// output base:
//   cold remote build (every action executed on the cluster), fully cached build after a clean,
//   one changed leaf; then the same three with --remote_download_minimal (a fresh checkout whose
//   actions the cluster already knows: cold = all cache hits without the bytes).
// Each client has a cluster of its own (its own storage), so neither finds the other's results in
// the cache (Kiln's and Bazel's action keys can be equal); the series alternate between the clients,
// Kiln, Bazel, Kiln minimal, Bazel minimal, so a busy neighbour slows both alike.
// Kiln's local null build is timed too, for the goal "fully cached build after clean at most 3x
// Kiln's own local null build". Bazel runs --batch (no server between commands, as Kiln).
//
//   node bench/remote/kiln-vs-bazel.mjs [--packages=1000] [--executors=1] [--runner=local|docker]
//                                       [--jobs=N] [--bazel=PATH|none] [--kiln=PATH]
// Needs `npm run build` first; Bazel from KILN_BAZEL or .cache/bazel/2.1.0/bazel. Prints ratios.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startKilnCluster, stopKilnCluster } from '../common/kiln-cluster.mjs';
import { descendantsCpuS, machineCpu, processCpuS } from '../common/cpu.mjs';
import { defaultBazel, measure } from '../common/measure.mjs';
import { actionCount, generateWorkspace, leafSource } from '../build/generate.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const flags = {
  packages: 1000,
  executors: 1,
  runner: 'local',
  jobs: Math.max(8, availableParallelism() * 4),
  bazel: defaultBazel(REPO) ?? 'none',
  kiln: join(REPO, 'bin/kiln'),
};
for (const a of process.argv.slice(2)) {
  const m = /^--(packages|executors|runner|jobs|bazel|kiln)=(.+)$/.exec(a);
  if (!m) throw new Error(`unknown argument ${a}`);
  flags[m[1]] = ['packages', 'executors', 'jobs'].includes(m[1]) ? Number(m[2]) : m[2];
}

function startCluster(storage) {
  return startKilnCluster(flags.kiln, ['--port', '0', '--storage', storage, '--executors', String(flags.executors), '--runner', flags.runner]);
}

const processes = (m) => /INFO: (\d+ process(?:es)?[^\n]*)/.exec(m.stderr)?.[1] ?? '?';
const machineShare = (m) =>
  m.machineBusyS === undefined
    ? ''
    : `; cluster ${m.clusterCpuS.toFixed(1)} s CPU, its actions ${m.actionsCpuS.toFixed(1)} s, machine busy ${m.machineBusyS.toFixed(1)} s (${((100 * m.machineBusyS) / (availableParallelism() * (m.ms / 1000))).toFixed(0)}%)`;
const fmt = (m) => `${(m.ms / 1000).toFixed(2)} s wall, ${m.cpuS.toFixed(1)} s CPU, ${m.rssMb.toFixed(0)} MB (${processes(m)})${machineShare(m)}`;
/**
 * A build measured with the CPU its cluster's process spent meanwhile, the CPU of the processes below it
 * (the sandbox helper and the actions it ran), and how busy the whole machine was: on one machine the
 * client, the cluster and the actions share the cores.
 */
const onCluster = (cluster, run) => {
  const clusterBefore = processCpuS(cluster.child.pid);
  const actionsBefore = descendantsCpuS(cluster.child.pid);
  const machineBefore = machineCpu();
  const m = run();
  m.machineBusyS = (machineCpu().busy - machineBefore.busy) / 1000;
  m.clusterCpuS = processCpuS(cluster.child.pid) - clusterBefore;
  m.actionsCpuS = descendantsCpuS(cluster.child.pid) - actionsBefore;
  return m;
};
const ratio = (a, b) => (a.ms / b.ms).toFixed(3);

const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-remote-'));
const clusters = [];
try {
  const template = join(dir, 'template');
  generateWorkspace(template, flags.packages);
  const checkout = (name) => {
    const ws = join(dir, name);
    cpSync(template, ws, { recursive: true });
    return ws;
  };
  const cluster = async (name) => {
    const c = await startCluster(join(dir, `cas-${name}`));
    clusters.push(c);
    return c;
  };
  const kilnCluster = await cluster('kiln');
  const bazelCluster = flags.bazel === 'none' ? undefined : await cluster('bazel');
  const actions = actionCount(flags.packages);
  console.log(`${flags.packages} packages (${actions} actions), ${flags.executors} ${flags.runner} executor(s) per cluster, --jobs=${flags.jobs}`);

  // Kiln: a HOME per checkout, so each has its own output base.
  const kiln = (ws, ...args) => measure([flags.kiln, ...args], ws, { env: { ...process.env, HOME: join(ws, '.home') } });
  const kilnRemote = ['build', `--remote_executor=${kilnCluster.endpoint}`, `--jobs=${flags.jobs}`];
  const local = checkout('kiln-local');
  kiln(local, 'build', '--spawn_strategy=local', '//...');
  const kilnNull = kiln(local, 'build', '--spawn_strategy=local', '//...');
  console.log(`  kiln local null build          ${fmt(kilnNull)}`);

  const results = {};
  const series = (name, run, clean, flagsExtra) => {
    const ws = checkout(name);
    const cold = run(ws, flagsExtra);
    clean(ws);
    const cached = run(ws, flagsExtra);
    // A change of its own per series, so no series finds another's results in the cluster's cache.
    appendFileSync(join(ws, leafSource(Math.min(5, flags.packages - 1))), `changed by the benchmark (${name})\n`);
    const leaf = run(ws, flagsExtra);
    return { cold, cached, leaf };
  };
  const report = (who, r) => {
    console.log(`  ${who} cold remote build     ${fmt(r.cold)}`);
    console.log(`  ${who} cached after clean    ${fmt(r.cached)}`);
    console.log(`  ${who} one leaf changed      ${fmt(r.leaf)}`);
  };
  const kilnRun = (ws, extra) => onCluster(kilnCluster, () => kiln(ws, ...kilnRemote, ...extra, '//...'));
  const kilnClean = (ws) => kiln(ws, 'clean');
  // Bazel's output base beside the checkout: inside it, //... would take in its embedded tools.
  const bazelRun = (ws, extra) =>
    onCluster(bazelCluster, () =>
      measure(
        [
          flags.bazel,
          `--output_base=${ws}.bazel-ob`,
          '--batch',
          'build',
          '--symlink_prefix=/',
          `--remote_executor=${bazelCluster.endpoint}`,
          '--remote_timeout=120',
          `--jobs=${flags.jobs}`,
          ...extra,
          '//...',
        ],
        ws,
      ),
    );
  const bazelClean = (ws) => measure([flags.bazel, `--output_base=${ws}.bazel-ob`, '--batch', 'clean'], ws);
  results.kiln = series('kiln', kilnRun, kilnClean, []);
  report('kiln', results.kiln);
  if (bazelCluster) {
    results.bazel = series('bazel', bazelRun, bazelClean, []);
    report('bazel', results.bazel);
  }
  results.kilnMinimal = series('kiln-minimal', kilnRun, kilnClean, ['--remote_download_minimal']);
  report('kiln minimal', results.kilnMinimal);
  if (bazelCluster) {
    results.bazelMinimal = series('bazel-minimal', bazelRun, bazelClean, ['--remote_download_minimal']);
    report('bazel minimal', results.bazelMinimal);
    console.log('  ratios (kiln / bazel; goal <= 0.5 for cold and cached):');
    for (const k of ['cold', 'cached', 'leaf'])
      console.log(`    ${k.padEnd(7)} ${ratio(results.kiln[k], results.bazel[k])}   minimal ${ratio(results.kilnMinimal[k], results.bazelMinimal[k])}`);
  }
  console.log(
    `  kiln cached after clean / kiln local null build = ${ratio(results.kiln.cached, kilnNull)} (goal <= 3), minimal ${ratio(results.kilnMinimal.cached, kilnNull)}`,
  );
} finally {
  for (const c of clusters) await stopKilnCluster(c);
  spawnSync('chmod', ['-R', 'u+w', dir]);
  rmSync(dir, { recursive: true, force: true });
}
