#!/usr/bin/env node
// The multi-host scenario of test/e2e/multihost.test.ts, timed: four hosts made of network namespaces
// (198.18.0.1-4, the harness of test/setup/test-network.ts), the scheduler with its own CAS on A,
// executors on B (and C), the clients on D, over TLS with bearer tokens.
//  1. The generated workspace of bench/build/ (100 packages by default) built remotely from D with 1 and
//     with 2 executors, each build on a fresh cluster (nothing cached), the two alternating each round.
//  2. Client CPU per unary call (GetActionResult through the lean transport) from D against a plaintext
//     port without auth and against the TLS port with a token, alternating each round.
// Prints each run, the medians and the machine's load average before and after.
//
//   npm run build && node bench/multihost/run.mjs [--packages=100] [--rounds=3] [--slots=2] [--calls=10000]
// As root, with iproute2 and openssl (scripts/test-setup.d/).
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const flags = { packages: 100, rounds: 3, slots: 2, calls: 10_000, 'in-flight': 256 };
for (const a of process.argv.slice(2)) {
  const m = /^--(packages|rounds|slots|calls|in-flight)=(\d+)$/.exec(a);
  if (!m) throw new Error(`unknown argument ${a}`);
  flags[m[1]] = Number(m[2]);
}

// The test's harness, compiled once. It lives in dist/bench-multihost/ so that its path to bin/kiln
// (two folders up, as from test/e2e/) still holds.
const harnessDir = join(REPO, 'dist/bench-multihost');
await build({
  entryPoints: { network: join(REPO, 'test/setup/test-network.ts'), cluster: join(REPO, 'test/e2e/multihost-cluster.ts') },
  outdir: harnessDir,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  packages: 'external',
  logLevel: 'warning',
});
const { TestNetwork } = await import(join(harnessDir, 'network.mjs'));
const { runOn, startMultihostCluster, startServer, KILN_BINARY } = await import(join(harnessDir, 'cluster.mjs'));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-multihost-'));
chmodSync(dir, 0o755); // the executors' work directories are below it; actions run as nobody
const network = TestNetwork.create(['a', 'b', 'c', 'd']);
const d = network.host('d');
try {
  console.log(`load average before: ${load()} (1, 5, 15 min)`);
  execFileSync(process.execPath, [join(REPO, 'bench/build/generate.mjs'), join(dir, 'template'), String(flags.packages)]);
  const actions = flags.packages * 11 + 2;

  // 1. Remote builds from D with 1 and 2 executors.
  const builds = { 1: [], 2: [] };
  let n = 0;
  for (let round = 1; round <= flags.rounds; round++) {
    for (const executors of [1, 2]) {
      const run = join(dir, `run-${++n}`);
      mkdirSync(run);
      const cluster = await startMultihostCluster({ network, dir: run, schedulerHost: 'a', executorHosts: ['b', 'c'].slice(0, executors), slots: flags.slots });
      try {
        cpSync(join(dir, 'template'), join(run, 'ws'), { recursive: true });
        const started = process.hrtime.bigint();
        const result = await runOn(
          network,
          d,
          KILN_BINARY,
          [
            'build',
            '--jobs=16',
            `--remote_executor=${cluster.endpoint}`,
            `--tls_certificate=${cluster.ca}`,
            `--remote_header=authorization=Bearer ${cluster.tokens.developer}`,
            '//...',
          ],
          join(run, 'ws'),
          join(run, 'home'),
        );
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        if (result.code !== 0 || !result.output.includes(`INFO: ${actions} processes: ${actions} remote.`))
          throw new Error(`the remote build failed or was not all remote:\n${result.output}`);
        builds[executors].push(seconds);
        console.log(`  round ${round}  ${executors} executor(s) x ${flags.slots} slots: ${seconds.toFixed(1)} s  (load ${load()})`);
      } finally {
        await cluster.stop();
      }
    }
  }

  // 2. Unary calls from D: a plaintext port without auth beside the secured one, on A.
  const run = join(dir, 'unary');
  mkdirSync(run);
  const cluster = await startMultihostCluster({ network, dir: run, schedulerHost: 'a', executorHosts: [], slots: 1 });
  const plain = await startServer(
    network,
    network.host('a'),
    'scheduler',
    'plaintext',
    { host: network.host('a').address, port: 8981 },
    run,
    /^grpc:\/\/\S+$/m,
  );
  const client = (endpoint, extra) =>
    runOn(
      network,
      d,
      process.execPath,
      [join(REPO, 'bench/multihost/unary-client.mjs'), `--endpoint=${endpoint}`, `--calls=${flags.calls}`, `--in-flight=${flags['in-flight']}`, ...extra],
      REPO,
      join(run, 'home'),
    ).then((r) => {
      if (r.code !== 0) throw new Error(`unary client failed:\n${r.output}`);
      return JSON.parse(r.output.trim().split('\n').at(-1));
    });
  const plainEndpoint = `grpc://${network.host('a').address}:8981`;
  const secured = [`--ca=${cluster.ca}`];
  const unary = { plaintext: [], 'TLS + token': [] };
  try {
    await client(plainEndpoint, ['--store', '--calls=1']);
    await client(cluster.endpoint, [...secured, `--token=${cluster.tokens.ci}`, '--store', '--calls=1']);
    for (let round = 1; round <= flags.rounds; round++) {
      for (const [name, extra, endpoint] of [
        ['plaintext', [], plainEndpoint],
        ['TLS + token', [...secured, `--token=${cluster.tokens.developer}`], cluster.endpoint],
      ]) {
        const r = await client(endpoint, extra);
        unary[name].push(r);
        console.log(
          `  round ${round}  ${name.padEnd(12)} client CPU ${r.cpuUsPerCall.toFixed(1).padStart(6)} us/call   wall ${r.wallMs.toFixed(0).padStart(6)} ms`,
        );
      }
    }
  } finally {
    plain.child.kill('SIGINT');
    await plain.exited;
    await cluster.stop();
  }

  console.log(`medians (${flags.rounds} rounds):`);
  for (const executors of [1, 2])
    console.log(`  remote build of ${flags.packages} packages (${actions} actions), ${executors} executor(s): ${median(builds[executors]).toFixed(1)} s`);
  const cpu = Object.fromEntries(Object.entries(unary).map(([name, rs]) => [name, median(rs.map((r) => r.cpuUsPerCall))]));
  for (const [name, us] of Object.entries(cpu)) console.log(`  GetActionResult ${name.padEnd(12)} ${us.toFixed(1)} us of client CPU per call`);
  console.log(`  TLS + token over plaintext: ${(((cpu['TLS + token'] - cpu.plaintext) / cpu.plaintext) * 100).toFixed(1)}% added client CPU per call`);
  console.log(`load average after: ${load()}`);
} finally {
  network.remove();
  rmSync(dir, { recursive: true, force: true });
}
