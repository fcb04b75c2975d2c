// One cache server + execution services and in-process executors on loopback, and a client that
// runs fresh no-op actions (/bin/true, distinct salt, do_not_cache: never merged nor cached).
// Shared by the benchmarks of this folder. Build first (npm run build).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const { reapi, encodeMessage, unpackAny } = await import(join(repo, 'dist/src/core/index.js'));
const { parseCacheServerConfig, startCacheServer, createExecutionServer } = await import(join(repo, 'dist/scheduler/index.js'));
const { startExecutor, DEFAULT_CACHE_BYTES } = await import(join(repo, 'dist/executor/index.js'));

export const NO_OP = ['/bin/true'];

/** A runner request for the no-op in `buildDirectory` (empty environment, output kept in memory). */
export function noOpRunRequest(buildDirectory, timeoutMs = 0) {
  return {
    buildDirectory,
    arguments: NO_OP,
    environment: {},
    workingDirectory: '',
    platform: [],
    timeoutMs,
    stdout: { kind: 'buffer', limitBytes: 1024 },
    stderr: { kind: 'buffer', limitBytes: 1024 },
  };
}

/** `--name=value` / `--flag` arguments as an object (values are strings; a bare flag is ''). */
export function parseArgs(argv) {
  return Object.fromEntries(
    argv.map((a) => {
      const m = /^--([a-z-]+)=?(.*)$/.exec(a);
      if (!m) throw new Error(`bad argument ${a}`);
      return [m[1], m[2]];
    }),
  );
}
let salt = 0;

/**
 * Starts the cluster in this process: `executors` executors of `slots` slots, each with the runner
 * `runner()` gives, and a client (see connectClient).
 */
export async function startCluster({ executors, slots, work, runner }) {
  const execution = createExecutionServer();
  const config = parseCacheServerConfig({}, 'bench', work, { host: '127.0.0.1', port: 0 });
  const server = await startCacheServer(config, {
    log: { info: () => {}, warn: (m) => process.stderr.write(`${m}\n`) },
    extraServices: (ctx) => execution.services(ctx),
    executionCapabilities: execution.capabilities,
  });
  const running = [];
  for (let i = 0; i < executors; i++) {
    const chosen = await runner();
    running.push(
      await startExecutor(
        {
          scheduler: server.endpoint,
          instanceName: '',
          name: `bench-${i}`,
          slots,
          runner: chosen.name === 'docker' ? 'docker' : 'local',
          workDirectory: join(work, `e${i}`),
          cacheBytes: DEFAULT_CACHE_BYTES,
          platform: [],
        },
        (m) => process.stderr.write(`${m}\n`),
        chosen,
      ),
    );
  }
  const client = await connectClient(server.endpoint);
  return {
    runOne: client.runOne,
    stop: async () => {
      for (const e of running) await e.stop();
      client.close();
      await server.close();
      execution.close();
    },
  };
}

/**
 * A REAPI client of the cluster at `endpoint` (grpc://HOST:PORT): `runOne()` resolves with the
 * ExecuteResponse of a fresh no-op action (and rejects unless it exited 0).
 */
export async function connectClient(endpoint) {
  const address = endpoint.replace('grpc://', '');
  const make = (def, name) => new (grpc.makeGenericClientConstructor(def, name))(address, grpc.credentials.createInsecure());
  const cas = make(reapi.ContentAddressableStorageService, 'CAS');
  const exec = make(reapi.ExecutionService, 'Execution');
  const command = encodeMessage(reapi.Command, { arguments: NO_OP });
  const root = encodeMessage(reapi.Directory, {});
  await new Promise((resolve, reject) =>
    cas.BatchUpdateBlobs({ requests: [command, root].map((m) => ({ digest: m.digest, data: m.data })) }, (e) => (e ? reject(e) : resolve())),
  );
  const runOne = async () => {
    const action = encodeMessage(reapi.Action, {
      commandDigest: command.digest,
      inputRootDigest: root.digest,
      salt: Buffer.from(String(salt++)),
      doNotCache: true,
    });
    await new Promise((resolve, reject) =>
      cas.BatchUpdateBlobs({ requests: [{ digest: action.digest, data: action.data }] }, (e) => (e ? reject(e) : resolve())),
    );
    return new Promise((resolve, reject) => {
      let last;
      const stream = exec.Execute({ actionDigest: action.digest });
      stream.on('data', (op) => (last = op));
      stream.on('error', reject);
      stream.on('end', () => {
        const response = unpackAny(reapi.ExecuteResponse, last.response);
        if ((response.status?.code ?? 0) !== 0 || response.result.exitCode !== 0)
          reject(new Error(`action failed: ${JSON.stringify(response.status)} exit ${response.result?.exitCode}`));
        else resolve(response);
      });
    });
  };
  return {
    runOne,
    close: () => {
      cas.close();
      exec.close();
    },
  };
}

/** CPU milliseconds this process (every thread) spent per call in the last `ratePerSecond` run. */
export let lastCpuMsPerCall = NaN;

/** Runs `one()` `total` times, `concurrency` at once; resolves with the rate per second. */
export async function ratePerSecond(total, concurrency, one) {
  const cpu = process.cpuUsage();
  const start = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        await one();
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  lastCpuMsPerCall = (used.user + used.system) / 1000 / total;
  return total / ((performance.now() - start) / 1000);
}
