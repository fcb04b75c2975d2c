#!/usr/bin/env node
// Kiln's fully cached remote build after `kiln clean`, measured alone and repeatedly, for A/B runs of
// Kiln builds on one machine. The cache is filled once by a local build with --remote_cache (a cold
// remote build takes minutes on one executor; the action keys are the same) into a cluster storage
// directory under --state, which later runs reuse. Then, per round and per Kiln build in turn: the
// local null build of the filled checkout (run twice, the second timed: another build's analysis
// cache entry does not serve this one), a fresh `kiln cluster up` of that build on the storage,
// `kiln clean`, the cached build (every action a remote cache hit), `kiln clean`, the same with
// --remote_download_minimal. Prints every run and the medians; client CPU is the build's process
// tree, server CPU the cluster's during the build. Goal: cached after clean at most 3x the null build.
//
//   node bench/remote/cached-after-clean.mjs [--packages=1000] [--rounds=3] [--jobs=8]
//                                            [--kiln=PATH ...] [--state=DIR] [--cpu-prof=DIR]
// --kiln repeated: the builds to compare (default bin/kiln); --state: where the workspace, the
// filled storage and its checkout are kept between runs (default: a temporary directory, removed);
// --cpu-prof: V8 profiles of the clients and clusters of the first round into DIR.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startKilnCluster, stopKilnCluster } from '../common/kiln-cluster.mjs';
import { processCpuS } from '../common/cpu.mjs';
import { measure } from '../common/measure.mjs';
import { actionCount, generateWorkspace } from '../build/generate.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const flags = { packages: 1000, rounds: 3, jobs: 8, kiln: [], state: undefined, cpuProf: undefined };
for (const a of process.argv.slice(2)) {
  const m = /^--(packages|rounds|jobs|kiln|state|cpu-prof)=(.+)$/.exec(a);
  if (!m) throw new Error(`unknown argument ${a}`);
  if (m[1] === 'kiln') flags.kiln.push(resolve(m[2]));
  else if (m[1] === 'state') flags.state = resolve(m[2]);
  else if (m[1] === 'cpu-prof') flags.cpuProf = resolve(m[2]);
  else flags[m[1]] = Number(m[2]);
}
if (flags.kiln.length === 0) flags.kiln.push(join(REPO, 'bin/kiln'));

/** A launcher running `kiln` under `node --cpu-prof` (NODE_OPTIONS may not carry --cpu-prof). */
function profilingLauncher(kiln, profDir) {
  mkdirSync(profDir, { recursive: true });
  const launcher = join(profDir, 'kiln');
  writeFileSync(launcher, `#!/bin/sh\nexec node --cpu-prof --cpu-prof-dir="${profDir}" "${join(dirname(kiln), 'kiln.js')}" "$@"\n`);
  chmodSync(launcher, 0o755);
  return launcher;
}

const processes = (m) => /INFO: (\d+ processes[^\n]*)/.exec(m.stderr)?.[1] ?? '?';
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const secs = (ms) => `${(ms / 1000).toFixed(2)} s`;

const state = flags.state ?? mkdtempSync(join(tmpdir(), 'kiln-bench-cached-'));
const scratch = mkdtempSync(join(tmpdir(), 'kiln-bench-cached-run-'));
const storage = join(state, 'cas');
const filled = join(state, 'filled');
let cluster;
try {
  const template = join(state, `template-${flags.packages}`);
  if (!existsSync(template)) generateWorkspace(template, flags.packages);
  const actions = actionCount(flags.packages);
  console.log(`${flags.packages} packages (${actions} actions), --jobs=${flags.jobs}, ${flags.rounds} round(s) of ${flags.kiln.join(' vs ')}`);
  const kiln = (k, ws, args) => measure([k, ...args], ws, { env: { ...process.env, HOME: join(ws, '.home') } });
  const checkout = (ws) => {
    rmSync(ws, { recursive: true, force: true });
    cpSync(template, ws, { recursive: true });
    return ws;
  };

  if (!existsSync(join(filled, '.filled'))) {
    // Every action run here and its result uploaded.
    rmSync(storage, { recursive: true, force: true });
    cluster = await startKilnCluster(flags.kiln[0], ['--port', '0', '--storage', storage, '--executors', '1', '--runner', 'local']);
    const fill = kiln(flags.kiln[0], checkout(filled), [
      'build',
      `--remote_cache=${cluster.endpoint}`,
      '--spawn_strategy=local',
      `--jobs=${flags.jobs}`,
      '//...',
    ]);
    console.log(`  filled the cache in ${secs(fill.ms)} (${processes(fill)})`);
    await stopKilnCluster(cluster);
    cluster = undefined;
    writeFileSync(join(filled, '.filled'), '');
  }

  const results = flags.kiln.map(() => ({ null: [], cached: [], minimal: [] }));
  const workspaces = flags.kiln.map((_, i) => checkout(join(scratch, `remote-${i}`)));
  for (let r = 0; r < flags.rounds; r++) {
    for (const [i, plain] of flags.kiln.entries()) {
      const prof = r === 0 && flags.cpuProf ? join(flags.cpuProf, `kiln-${i}`) : undefined;
      const local = ['build', '--spawn_strategy=local', `--jobs=${flags.jobs}`, '//...'];
      kiln(plain, filled, local);
      const nullBuild = kiln(plain, filled, local);
      results[i].null.push(nullBuild);
      cluster = await startKilnCluster(prof ? profilingLauncher(plain, join(prof, 'cluster')) : plain, [
        '--port',
        '0',
        '--storage',
        storage,
        '--executors',
        '1',
        '--runner',
        'local',
      ]);
      const ws = workspaces[i];
      const build = (extra, name) => {
        const flagsUsed = ['build', `--remote_executor=${cluster.endpoint}`, `--jobs=${flags.jobs}`, ...extra, '//...'];
        // The first build of a checkout with these flags fills its analysis cache, which a clean keeps.
        if (r === 0) kiln(plain, ws, flagsUsed);
        kiln(plain, ws, ['clean']);
        const before = processCpuS(cluster.child.pid);
        const k = prof ? profilingLauncher(plain, join(prof, name)) : plain;
        const m = kiln(k, ws, flagsUsed);
        m.serverCpuS = processCpuS(cluster.child.pid) - before;
        return m;
      };
      const cached = build([], 'all');
      const minimal = build(['--remote_download_minimal'], 'minimal');
      results[i].cached.push(cached);
      results[i].minimal.push(minimal);
      const show = (m) => `${secs(m.ms)} (client ${m.cpuS.toFixed(1)} s CPU, server ${m.serverCpuS.toFixed(1)} s CPU; ${processes(m)})`;
      console.log(`  round ${r + 1}, kiln ${i}: null ${secs(nullBuild.ms)}; cached after clean ${show(cached)}; minimal ${show(minimal)}`);
      await stopKilnCluster(cluster);
      cluster = undefined;
    }
  }
  for (const [i, k] of flags.kiln.entries()) {
    const med = (key, f = (m) => m.ms / 1000) => median(results[i][key].map(f));
    console.log(
      `  kiln ${i} (${k}) medians: local null ${med('null').toFixed(2)} s; cached after clean ${med('cached').toFixed(2)} s ` +
        `(client ${med('cached', (m) => m.cpuS).toFixed(1)} s CPU, server ${med('cached', (m) => m.serverCpuS).toFixed(1)} s CPU), ` +
        `minimal ${med('minimal').toFixed(2)} s; cached / null = ${(med('cached') / med('null')).toFixed(2)} (goal <= 3), minimal ${(med('minimal') / med('null')).toFixed(2)}`,
    );
  }
} finally {
  await stopKilnCluster(cluster);
  for (const d of [scratch, ...(flags.state ? [] : [state])]) {
    spawnSync('chmod', ['-R', 'u+w', d]);
    rmSync(d, { recursive: true, force: true });
  }
}
