#!/usr/bin/env node
// Bazel 2.1.0 as a remote client of Kiln's cluster, on the build benchmark's workspace
// (bench/build/generate.mjs): a cold build that fills the cache (or runs every action remotely),
// then, after `bazel clean`, a fully cached build; both timed, with Bazel's process summary, which
// must say that the second build ran nothing and took everything from the remote cache.
//
//   node bench/remote/remote-client.mjs [--packages=1000] [--mode=cache|execute] [--executors=N]
//                                      [--runner=local|docker] [--bazel=PATH] [--kiln=PATH]
// mode cache:   kiln cluster up --executors 0, bazel --remote_cache
// mode execute: kiln cluster up --executors N --runner R, bazel --remote_executor
// Needs `npm run build` first; Bazel from KILN_BAZEL or .cache/bazel/2.1.0/bazel.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startKilnCluster, stopKilnCluster } from '../common/kiln-cluster.mjs';
import { defaultBazel, measure } from '../common/measure.mjs';
import { actionCount, generateWorkspace } from '../build/generate.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const flags = { packages: 1000, mode: 'cache', executors: 1, runner: 'local', bazel: defaultBazel(REPO), kiln: join(REPO, 'bin/kiln') };
for (const a of process.argv.slice(2)) {
  const m = /^--(packages|mode|executors|runner|bazel|kiln)=(.+)$/.exec(a);
  if (!m) throw new Error(`unknown argument ${a}`);
  flags[m[1]] = ['packages', 'executors'].includes(m[1]) ? Number(m[2]) : m[2];
}
if (!flags.bazel) throw new Error('Bazel 2.1.0 not found: run scripts/test-setup.d/30-bazel.sh or set KILN_BAZEL');
if (!['cache', 'execute'].includes(flags.mode)) throw new Error(`--mode must be cache or execute, got ${flags.mode}`);

/** Starts `kiln cluster up` and resolves with its endpoint (the first line of its stdout). */
function startCluster(storage) {
  const executors = flags.mode === 'cache' ? ['--executors', '0'] : ['--executors', String(flags.executors), '--runner', flags.runner];
  return startKilnCluster(flags.kiln, ['--port', '0', '--storage', storage, ...executors]);
}

const processes = (m) => /INFO: (\d+ processes[^\n]*)/.exec(m.stderr)?.[1] ?? '?';
const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-remote-'));
let cluster;
try {
  const ws = join(dir, 'ws');
  generateWorkspace(ws, flags.packages);
  cluster = await startCluster(join(dir, 'cas'));
  const remoteFlag = flags.mode === 'cache' ? `--remote_cache=${cluster.endpoint}` : `--remote_executor=${cluster.endpoint}`;
  const bazel = (...args) => measure([flags.bazel, `--output_base=${join(dir, 'bazel-ob')}`, '--batch', ...args], ws);
  const common = ['--symlink_prefix=/', remoteFlag, '--remote_timeout=120'];
  console.log(
    `${flags.packages} packages (${actionCount(flags.packages)} actions), ${flags.mode === 'cache' ? 'remote cache' : `remote execution, ${flags.executors} ${flags.runner} executor(s)`} at ${cluster.endpoint}`,
  );
  const cold = bazel('build', ...common, '//...');
  console.log(`  bazel cold      ${(cold.ms / 1000).toFixed(1)} s wall, ${cold.rssMb.toFixed(0)} MB (${processes(cold)})`);
  bazel('clean');
  const cached = bazel('build', ...common, '//...');
  console.log(`  bazel cached    ${(cached.ms / 1000).toFixed(1)} s wall, ${cached.rssMb.toFixed(0)} MB (${processes(cached)})`);
  const allHits = /processes: \d+ remote cache hit\.?$/.test(processes(cached)) || /\b0 processes/.test(processes(cached));
  console.log(`  second build served entirely from the cache: ${allHits ? 'yes' : 'NO'}`);
} finally {
  await stopKilnCluster(cluster);
  spawnSync('chmod', ['-R', 'u+w', dir]);
  rmSync(dir, { recursive: true, force: true });
}
