#!/usr/bin/env node
// No-op actions through Kiln's scheduler: actions per second with 1 and 4 executors (local runner),
// added latency per action against running the same command with the runner directly, and the mean
// per-phase times from ExecutedActionMetadata. Everything in one process on loopback. Beside each
// throughput figure, the floor measured in the same process at the same concurrency: Node's own
// child_process.spawn of /bin/true (pipes for stdout/stderr, as the runner uses), and the runner alone.
// Build first (npm run build). Usage: node bench/cluster/noop-throughput.mjs [--actions N] [--concurrency N]
//   [--latency-actions N] [--slots N] [--sandbox auto|off]. See bench/cluster/README.md.
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as harness from './cluster-harness.mjs';
import { NO_OP, noOpRunRequest, parseArgs, ratePerSecond, startCluster } from './cluster-harness.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const { LocalRunner } = await import(join(repo, 'dist/executor/runners/local-runner.js'));

const args = parseArgs(process.argv.slice(2));
const ACTIONS = Number(args['actions'] ?? 2000);
const CONCURRENCY = Number(args['concurrency'] ?? 64);
const LATENCY_ACTIONS = Number(args['latency-actions'] ?? 200);
const SLOTS = Number(args['slots'] ?? 4);
/** `auto`: the namespace sandbox when available (as kiln cluster up runs); `off`: plain processes. */
const SANDBOX = args['sandbox'] ?? 'auto';

const newRunner = () => LocalRunner.create({ sandbox: SANDBOX, log: () => {} });
const runRequest = (buildDirectory) => noOpRunRequest(buildDirectory);

/** Node's spawn of /bin/true and nothing else: what any runner built on child_process pays at least. */
const bareSpawn = () =>
  new Promise((resolve, reject) => {
    const child = spawn(NO_OP[0], [], { stdio: ['ignore', 'pipe', 'pipe'], env: {}, detached: true });
    child.stdout.resume();
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', resolve);
  });

/** The floors at `concurrency` (= executors x slots), in this process: bare spawn, and the runner alone. */
async function floors(concurrency, work) {
  const dir = join(work, `floor-${concurrency}`);
  await mkdir(dir, { recursive: true });
  const runner = await newRunner();
  const total = Math.min(ACTIONS, 1000);
  for (let i = 0; i < 20; i++) await bareSpawn();
  const spawnRate = await ratePerSecond(total, concurrency, bareSpawn);
  const spawnCpu = harness.lastCpuMsPerCall;
  const runnerRate = await ratePerSecond(total, concurrency, () => runner.run(runRequest(dir)));
  return { spawnRate, spawnCpu, runnerRate, runnerCpu: harness.lastCpuMsPerCall, runner: runner.name };
}

async function throughput(executors, work) {
  const c = await startCluster({ executors, slots: SLOTS, work, runner: newRunner });
  for (let i = 0; i < 20; i++) await c.runOne(); // warm up connections and the JIT
  const rate = await ratePerSecond(ACTIONS, CONCURRENCY, c.runOne);
  const cpu = harness.lastCpuMsPerCall;
  await c.stop();
  return { rate, cpu };
}

const ts = (t) => (t ? t.seconds * 1000 + t.nanos / 1e6 : NaN);

async function latency(work) {
  const runner = await newRunner();
  const direct = [];
  for (let i = 0; i < LATENCY_ACTIONS; i++) {
    const t0 = performance.now();
    await runner.run(runRequest(work));
    direct.push(performance.now() - t0);
  }
  const c = await startCluster({ executors: 1, slots: SLOTS, work: join(work, 'lat'), runner: newRunner });
  for (let i = 0; i < 20; i++) await c.runOne();
  const remote = [];
  const phases = { queued: [], fetch: [], execute: [], upload: [], worker: [] };
  for (let i = 0; i < LATENCY_ACTIONS; i++) {
    const t0 = performance.now();
    const response = await c.runOne();
    remote.push(performance.now() - t0);
    const m = response.result.executionMetadata;
    phases.queued.push(ts(m.workerStartTimestamp) - ts(m.queuedTimestamp));
    phases.fetch.push(ts(m.inputFetchCompletedTimestamp) - ts(m.inputFetchStartTimestamp));
    phases.execute.push(ts(m.executionCompletedTimestamp) - ts(m.executionStartTimestamp));
    phases.upload.push(ts(m.outputUploadCompletedTimestamp) - ts(m.outputUploadStartTimestamp));
    phases.worker.push(ts(m.workerCompletedTimestamp) - ts(m.workerStartTimestamp));
  }
  await c.stop();
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    runner: runner.name,
    direct: median(direct),
    remote: median(remote),
    phases: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, mean(v)])),
  };
}

const work = await mkdtemp(join(tmpdir(), 'kiln-bench-cluster-'));
// A root executor's sandbox runs actions as nobody, who must be able to reach the build directories.
await chmod(work, 0o755);
try {
  const floorOne = await floors(SLOTS, work);
  const one = await throughput(1, join(work, 't1'));
  const floorFour = await floors(4 * SLOTS, work);
  const four = await throughput(4, join(work, 't4'));
  const lat = await latency(work);
  const f = (x) => x.toFixed(0);
  const c = (x) => x.toFixed(2);
  console.log(
    `no-op actions/s (${ACTIONS} actions, ${CONCURRENCY} clients, ${SLOTS} slots per executor, runner ${floorOne.runner}): 1 executor ${f(one.rate)}, 4 executors ${f(four.rate)} (goal >= 500)`,
  );
  console.log(
    `floor in this process at the same concurrency (${SLOTS} / ${4 * SLOTS} at once): node spawn of /bin/true ${f(floorOne.spawnRate)} / ${f(floorFour.spawnRate)} per s, the ${floorOne.runner} runner alone ${f(floorOne.runnerRate)} / ${f(floorFour.runnerRate)} per s`,
  );
  console.log(
    `CPU of this process per action (ms, 1 / 4 executors): through the scheduler ${c(one.cpu)} / ${c(four.cpu)}, node spawn alone ${c(floorOne.spawnCpu)} / ${c(floorFour.spawnCpu)}, the runner alone ${c(floorOne.runnerCpu)} / ${c(floorFour.runnerCpu)}`,
  );
  console.log(
    `latency per action (median of ${LATENCY_ACTIONS}, runner ${lat.runner}): direct ${lat.direct.toFixed(2)} ms, through the scheduler ${lat.remote.toFixed(2)} ms, added ${(lat.remote - lat.direct).toFixed(2)} ms (goal < 5 ms)`,
  );
  console.log(
    `mean phases (ms): ${Object.entries(lat.phases)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(', ')}`,
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
