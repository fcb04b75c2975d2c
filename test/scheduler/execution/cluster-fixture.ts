import * as grpc from '@grpc/grpc-js';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { digestOf, encodeMessage, longrunning, reapi, unpackAny, type Digest } from '../../../src/core/index.js';
import { parseCacheServerConfig, startCacheServer, type CacheServer } from '../../../scheduler/index.js';
import { createExecutionServer, type ExecutionServer, type SchedulerConfig } from '../../../scheduler/execution/index.js';
import { BuildExecutor, CasClient, FileCache, SynchronizeLoop, schedulerChannel } from '../../../executor/index.js';
import { LocalRunner } from '../../../executor/runners/local-runner.js';
import type { Runner } from '../../../executor/runners/runner.js';
import { newMetricsRegistry } from '../../../src/core/metrics/index.js';
import { connect, must, type Clients } from '../cache-server-fixture.js';

/** A cache server with the execution services on an ephemeral loopback port, and executors to add. */
export interface TestCluster extends Clients {
  readonly server: CacheServer;
  readonly execution: ExecutionServer;
  /** Stops the server (all scheduler state is lost) and starts a fresh one on the same port. */
  restartServer(): Promise<void>;
  readonly address: string;
  readonly exec: reapi.ExecutionClient;
  readonly ops: longrunning.OperationsClient;
  /** Starts an in-process executor with the local runner (no sandbox: the test controls the commands). */
  addExecutor(options?: { slots?: number; name?: string; runner?: Runner }): Promise<SynchronizeLoop>;
  upload(data: Buffer | string): Promise<Digest>;
  /** Stores a Command, an input root of `files` and the Action; returns the action digest. */
  action(command: reapi.CommandInit, files?: Record<string, string>, action?: Partial<reapi.ActionInit>): Promise<Digest>;
  /** Whatever is left in the executors' build roots (build directories with content, spill files). */
  executorLeftovers(): Promise<string[]>;
  stop(): Promise<void>;
}

/** Every stage change is streamed at once unless a test sets `stageUpdateDelayMs` (it tests coalescing). */
/** A cluster for the running test only: stopped when the test ends, passed or failed. */
export async function startClusterForTest(config: Partial<SchedulerConfig> = {}, options: TestClusterOptions = {}): Promise<TestCluster> {
  const cluster = await startTestCluster(config, options);
  onTestFinished(() => cluster.stop());
  return cluster;
}

export interface TestClusterOptions {
  /** Serve Prometheus metrics on an ephemeral port (`server.metricsUrl`), the scheduler's included. */
  readonly metrics?: boolean;
  /** Keep the CAS and action cache in block files there, so that `restartServer` keeps them. */
  readonly storageDir?: string;
}

export async function startTestCluster(config: Partial<SchedulerConfig> = {}, options: TestClusterOptions = {}): Promise<TestCluster> {
  const work = await mkdtemp(join(tmpdir(), 'kiln-cluster-test-'));
  // A root executor's sandboxed actions run as nobody, which must reach their build directories.
  await chmod(work, 0o711);
  const start = async (port: number) => {
    const metrics = options.metrics ? newMetricsRegistry({ processMetrics: false }) : undefined;
    const execution = createExecutionServer({ config: { stageUpdateDelayMs: 0, ...config }, tickMs: 50, ...(metrics ? { metrics } : {}) });
    const cacheConfig = parseCacheServerConfig(options.metrics ? { metricsPort: 0 } : {}, 'test config', process.cwd(), {
      host: '127.0.0.1',
      port,
      ...(options.storageDir ? { storageDir: options.storageDir } : {}),
    });
    const server = await startCacheServer(cacheConfig, {
      ...(metrics ? { metrics } : {}),
      log: { info: () => undefined, warn: () => undefined },
      extraServices: (ctx) => execution.services(ctx),
      executionCapabilities: execution.capabilities,
    });
    return { execution, server };
  };
  let { execution, server } = await start(0);
  const address = server.endpoint.replace('grpc://', '');
  const clients = connect(server.endpoint);
  const make = <T>(definition: object, name: string): T => {
    const Ctor = grpc.makeGenericClientConstructor(definition as grpc.ServiceDefinition, name);
    return new Ctor(address, grpc.credentials.createInsecure()) as unknown as T;
  };
  const exec = make<reapi.ExecutionClient>(reapi.ExecutionService, 'Execution');
  const ops = make<longrunning.OperationsClient>(longrunning.OperationsService, 'Operations');
  const executors: { loop: SynchronizeLoop; cas: CasClient; executor: BuildExecutor; ownRunner?: Runner }[] = [];
  let count = 0;
  const upload = async (data: Buffer | string) => {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    const digest = digestOf(bytes);
    await must(clients.cas, clients.cas.BatchUpdateBlobs, { instanceName: '', requests: [{ digest, data: bytes }] });
    return digest;
  };
  const uploadMessage = async <I>(codec: { encode(m: I): Buffer }, message: I) => upload(codec.encode(message));
  return {
    ...clients,
    get server() {
      return server;
    },
    get execution() {
      return execution;
    },
    async restartServer() {
      // As the scheduler's own shutdown does: open Execute and WaitExecution streams end UNAVAILABLE.
      await execution.drain(0);
      await server.close();
      execution.close();
      ({ execution, server } = await start(server.port));
    },
    address,
    exec,
    ops,
    upload,
    async addExecutor(options = {}) {
      const index = count++;
      const dir = join(work, `executor-${index}`);
      const channel = schedulerChannel(address);
      const cas = new CasClient({ scheduler: address, instanceName: '' });
      const fileCache = await FileCache.open(join(dir, 'cache'), 64 * 1024 * 1024, (d, p) => cas.download(d, p));
      const ownRunner = options.runner ? undefined : await LocalRunner.create({ sandbox: 'off' });
      const runner = options.runner ?? ownRunner!;
      const name = options.name ?? `test-executor-${index}`;
      const executor = new BuildExecutor({ cas, fileCache, runner, buildRoot: join(dir, 'build'), workerName: name });
      const loop = new SynchronizeLoop({
        channel,
        instanceName: '',
        displayName: name,
        platform: [{ name: 'OSFamily', value: 'linux' }],
        slots: options.slots ?? 2,
        executor,
        log: () => undefined,
        refused: () => undefined,
      });
      loop.start();
      executors.push({ loop, cas, executor, ...(ownRunner ? { ownRunner } : {}) });
      return loop;
    },
    async action(command, files = {}, extra = {}) {
      const names = Object.keys(files).sort();
      const fileNodes: reapi.FileNodeInit[] = [];
      for (const name of names) fileNodes.push({ name, digest: await upload(files[name]!), isExecutable: name.endsWith('.sh') });
      const inputRootDigest = await uploadMessage(reapi.Directory, { files: fileNodes });
      const commandDigest = await uploadMessage(reapi.Command, command);
      const action: reapi.ActionInit = { commandDigest, inputRootDigest, ...extra };
      const { digest, data } = encodeMessage(reapi.Action, action);
      await upload(data);
      return digest;
    },
    async executorLeftovers() {
      const left: string[] = [];
      for (let i = 0; i < count; i++) {
        const root = join(work, `executor-${i}`, 'build');
        for (const entry of await readdir(root, { withFileTypes: true }).catch(() => [])) {
          // An empty directory is one the executor keeps for the next action.
          if (entry.isDirectory() && (await readdir(join(root, entry.name))).length === 0) continue;
          left.push(entry.name);
        }
      }
      return left;
    },
    async stop() {
      for (const e of executors) {
        await e.loop.stop();
        await e.executor.close();
        e.cas.close();
        await e.ownRunner?.close?.();
      }
      clients.close();
      exec.close();
      ops.close();
      await server.close();
      execution.close();
      await rm(work, { recursive: true, force: true });
    },
  };
}

/** Every Operation an Execute (or WaitExecution) stream sent, and how it ended. */
export interface StreamOutcome {
  operations: longrunning.Operation[];
  error?: grpc.ServiceError;
  last?: longrunning.Operation;
  response?: reapi.ExecuteResponse;
  stages: reapi.ExecutionStage_Value[];
}

export function collectStream(stream: grpc.ClientReadableStream<longrunning.Operation>): Promise<StreamOutcome> {
  return new Promise((resolve) => {
    const operations: longrunning.Operation[] = [];
    const finish = (error?: grpc.ServiceError) => {
      const last = operations[operations.length - 1];
      const response = last?.response ? (unpackAny(reapi.ExecuteResponse, last.response) ?? undefined) : undefined;
      const stages = operations.map((o) => unpackAny(reapi.ExecuteOperationMetadata, o.metadata!)!.stage);
      resolve({ operations, ...(error ? { error } : {}), ...(last ? { last } : {}), ...(response ? { response } : {}), stages });
    };
    stream.on('data', (op: longrunning.Operation) => operations.push(op));
    stream.on('error', (e: grpc.ServiceError) => finish(e));
    stream.on('end', () => finish());
  });
}

export function execute(cluster: TestCluster, request: reapi.ExecuteRequestInit, metadata = new grpc.Metadata()): Promise<StreamOutcome> {
  return collectStream(cluster.exec.Execute(request, metadata) as grpc.ClientReadableStream<longrunning.Operation>);
}

/** A Command that runs `script` with /bin/sh and a minimal PATH. */
export function shCommand(script: string, extra: Partial<reapi.CommandInit> = {}): reapi.CommandInit {
  return { arguments: ['/bin/sh', '-c', script], environmentVariables: [{ name: 'PATH', value: '/usr/bin:/bin' }], ...extra };
}
