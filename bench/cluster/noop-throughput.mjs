#!/usr/bin/env node
// No-op actions through Kiln's scheduler: actions per second with 1 and 4 executors (local runner),
// added latency per action against running the same command with the runner directly, and the mean
// per-phase times from ExecutedActionMetadata. Everything in one process on loopback.
// Build first (npm run build). Usage: node bench/cluster/noop-throughput.mjs [--actions N] [--concurrency N]
//   [--latency-actions N] [--slots N] [--sandbox auto|off]. See bench/cluster/README.md.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const { reapi, encodeMessage, unpackAny } = await import(join(repo, 'dist/src/core/index.js'));
const { parseCacheServerConfig, startCacheServer, createExecutionServer } = await import(join(repo, 'dist/scheduler/index.js'));
const { startExecutor, DEFAULT_CACHE_BYTES } = await import(join(repo, 'dist/executor/index.js'));
const { LocalRunner } = await import(join(repo, 'dist/executor/runners/local-runner.js'));

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const m = /^--([a-z-]+)=?(.*)$/.exec(a);
    if (!m) throw new Error(`bad argument ${a}`);
    return [m[1], m[2]];
  }),
);
const ACTIONS = Number(args['actions'] ?? 2000);
const CONCURRENCY = Number(args['concurrency'] ?? 64);
const LATENCY_ACTIONS = Number(args['latency-actions'] ?? 200);
const SLOTS = Number(args['slots'] ?? 4);
/** `auto`: the namespace sandbox when available (as kiln cluster up runs); `off`: plain processes. */
const SANDBOX = args['sandbox'] ?? 'auto';

const TRUE = ['/bin/true'];
let salt = 0;

async function cluster(executors, work) {
  const execution = createExecutionServer();
  const config = parseCacheServerConfig({}, 'bench', work, { host: '127.0.0.1', port: 0 });
  const server = await startCacheServer(config, {
    log: { info: () => {}, warn: (m) => process.stderr.write(`${m}\n`) },
    extraServices: (ctx) => execution.services(ctx),
    executionCapabilities: execution.capabilities,
  });
  const running = [];
  for (let i = 0; i < executors; i++) {
    running.push(
      await startExecutor(
        { scheduler: server.endpoint, instanceName: '', name: `bench-${i}`, slots: SLOTS, runner: 'local', workDirectory: join(work, `e${i}`), cacheBytes: DEFAULT_CACHE_BYTES, platform: [] },
        (m) => process.stderr.write(`${m}\n`),
        await LocalRunner.create({ sandbox: SANDBOX, log: () => {} }),
      ),
    );
  }
  const address = server.endpoint.replace('grpc://', '');
  const make = (def, name) => new (grpc.makeGenericClientConstructor(def, name))(address, grpc.credentials.createInsecure());
  const cas = make(reapi.ContentAddressableStorageService, 'CAS');
  const exec = make(reapi.ExecutionService, 'Execution');
  const command = encodeMessage(reapi.Command, { arguments: TRUE });
  const root = encodeMessage(reapi.Directory, {});
  await new Promise((resolve, reject) =>
    cas.BatchUpdateBlobs({ requests: [command, root].map((m) => ({ digest: m.digest, data: m.data })) }, (e) => (e ? reject(e) : resolve())),
  );
  /** A fresh no-op action (distinct salt, so nothing is cached or merged); resolves with its ExecuteResponse. */
  const runOne = async () => {
    const action = encodeMessage(reapi.Action, { commandDigest: command.digest, inputRootDigest: root.digest, salt: Buffer.from(String(salt++)), doNotCache: true });
    await new Promise((resolve, reject) => cas.BatchUpdateBlobs({ requests: [{ digest: action.digest, data: action.data }] }, (e) => (e ? reject(e) : resolve())));
    return new Promise((resolve, reject) => {
      let last;
      const stream = exec.Execute({ actionDigest: action.digest });
      stream.on('data', (op) => (last = op));
      stream.on('error', reject);
      stream.on('end', () => {
        const response = unpackAny(reapi.ExecuteResponse, last.response);
        if ((response.status?.code ?? 0) !== 0 || response.result.exitCode !== 0) reject(new Error(`action failed: ${JSON.stringify(response.status)}`));
        else resolve(response);
      });
    });
  };
  return {
    runOne,
    stop: async () => {
      for (const e of running) await e.stop();
      cas.close();
      exec.close();
      await server.close();
      execution.close();
    },
  };
}

async function throughput(executors, work) {
  const c = await cluster(executors, work);
  for (let i = 0; i < 20; i++) await c.runOne(); // warm up connections and the JIT
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < ACTIONS) {
        next++;
        await c.runOne();
      }
    }),
  );
  const ms = performance.now() - start;
  await c.stop();
  return ACTIONS / (ms / 1000);
}

const ts = (t) => (t ? t.seconds * 1000 + t.nanos / 1e6 : NaN);

async function latency(work) {
  const runner = await LocalRunner.create({ sandbox: SANDBOX, log: () => {} });
  const direct = [];
  for (let i = 0; i < LATENCY_ACTIONS; i++) {
    const t0 = performance.now();
    await runner.run({ buildDirectory: work, arguments: TRUE, environment: {}, workingDirectory: '', platform: [], timeoutMs: 0, stdout: { kind: 'buffer', limitBytes: 1024 }, stderr: { kind: 'buffer', limitBytes: 1024 } });
    direct.push(performance.now() - t0);
  }
  const c = await cluster(1, work);
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
try {
  const one = await throughput(1, join(work, 't1'));
  const four = await throughput(4, join(work, 't4'));
  const lat = await latency(work);
  console.log(`no-op actions/s (${ACTIONS} actions, ${CONCURRENCY} clients, ${SLOTS} slots per executor, local runner): 1 executor ${one.toFixed(0)}, 4 executors ${four.toFixed(0)} (goal >= 500)`);
  console.log(`latency per action (median of ${LATENCY_ACTIONS}, runner ${lat.runner}): direct ${lat.direct.toFixed(2)} ms, through the scheduler ${lat.remote.toFixed(2)} ms, added ${(lat.remote - lat.direct).toFixed(2)} ms (goal < 5 ms)`);
  console.log(`mean phases (ms): ${Object.entries(lat.phases).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`);
} finally {
  await rm(work, { recursive: true, force: true });
}
