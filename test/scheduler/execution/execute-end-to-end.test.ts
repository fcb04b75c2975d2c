import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { googleRpc, reapi, unpackAny } from '../../../src/core/index.js';
import { REQUEST_METADATA_KEY } from '../../../scheduler/execution/index.js';
import { call, must, readStream, statusDetails } from '../cache-server-fixture.js';
import { collectStream, execute, shCommand as sh, startClusterForTest } from './cluster-fixture.js';
import { until } from '../../setup/until.js';

const Stage = reapi.ExecutionStage_Value;
describe('Execute end to end (real server, in-process executor, local runner)', () => {
  it('runs an action, stores its outputs in the CAS and its result in the AC; the second Execute is a cache hit', async () => {
    const cluster = await startClusterForTest();
    await cluster.addExecutor();
    const actionDigest = await cluster.action(
      {
        ...sh(
          'mkdir -p out/dir/sub && tr a-z A-Z < in.txt > out/upper.txt && echo deep > out/dir/sub/f && ln -s upper.txt out/link && echo to-stdout && echo to-stderr >&2 && printf "%s" "$GREETING" > out/env.txt',
        ),
        environmentVariables: [
          { name: 'GREETING', value: 'hi there' },
          { name: 'PATH', value: '/usr/bin:/bin' },
        ],
        outputPaths: ['out/dir', 'out/env.txt', 'out/link', 'out/never-written', 'out/upper.txt'],
      },
      { 'in.txt': 'hello kiln\n' },
    );
    const first = await execute(cluster, { instanceName: '', actionDigest });
    expect(first.error).toBeUndefined();
    expect(first.stages[0]).toBe(Stage.CACHE_CHECK);
    expect(first.stages).toContain(Stage.EXECUTING);
    expect(first.stages[first.stages.length - 1]).toBe(Stage.COMPLETED);
    const response = first.response!;
    expect(response.status?.code ?? 0).toBe(googleRpc.Code.OK);
    expect(response.cachedResult).toBe(false);
    const result = response.result!;
    expect(result.exitCode).toBe(0);
    const read = async (d: reapi.Digest) => {
      const res = await must(cluster.cas, cluster.cas.BatchReadBlobs, { instanceName: '', digests: [d] });
      return res.responses[0]!.data;
    };
    const files = Object.fromEntries(result.outputFiles.map((f) => [f.path, f]));
    expect(Object.keys(files).sort()).toEqual(['out/env.txt', 'out/upper.txt']);
    expect((await read(files['out/upper.txt']!.digest!)).toString()).toBe('HELLO KILN\n');
    expect((await read(files['out/env.txt']!.digest!)).toString()).toBe('hi there');
    expect(result.outputSymlinks).toEqual([expect.objectContaining({ path: 'out/link', target: 'upper.txt' })]);
    const tree = reapi.Tree.decode(await read(result.outputDirectories[0]!.treeDigest!));
    expect(result.outputDirectories[0]!.path).toBe('out/dir');
    expect(tree.root!.directories.map((d) => d.name)).toEqual(['sub']);
    expect(tree.children[0]!.files.map((f) => f.name)).toEqual(['f']);
    expect((await read(result.stdoutDigest!)).toString()).toBe('to-stdout\n');
    expect((await read(result.stderrDigest!)).toString()).toBe('to-stderr\n');
    const meta = result.executionMetadata!;
    for (const field of [
      'queuedTimestamp',
      'workerStartTimestamp',
      'inputFetchStartTimestamp',
      'inputFetchCompletedTimestamp',
      'executionStartTimestamp',
      'executionCompletedTimestamp',
      'outputUploadStartTimestamp',
      'outputUploadCompletedTimestamp',
      'workerCompletedTimestamp',
    ] as const) {
      expect(meta[field], field).toBeTruthy();
    }
    expect(meta.worker).toBe('test-executor-0');

    const cached = await must(cluster.ac, cluster.ac.GetActionResult, { instanceName: '', actionDigest });
    expect(cached.exitCode).toBe(0);
    const second = await execute(cluster, { instanceName: '', actionDigest });
    expect(second.response!.cachedResult).toBe(true);
    expect(second.stages).toEqual([Stage.CACHE_CHECK, Stage.COMPLETED]);
    const forced = await execute(cluster, { instanceName: '', actionDigest, skipCacheLookup: true });
    expect(forced.response!.cachedResult).toBe(false);
    expect(forced.stages).toContain(Stage.EXECUTING);
  });

  it('runs a do_not_cache action even when the action cache holds a result for its digest', async () => {
    const cluster = await startClusterForTest();
    await cluster.addExecutor();
    const actionDigest = await cluster.action(sh('exit 3'), {}, { doNotCache: true });
    // Planted by a client: the scheduler never stores results of such actions, nor looks them up.
    await must(cluster.ac, cluster.ac.UpdateActionResult, { instanceName: '', actionDigest, actionResult: { exitCode: 0 } });
    const run = await execute(cluster, { instanceName: '', actionDigest });
    expect(run.response!.cachedResult).toBe(false);
    expect(run.response!.result!.exitCode).toBe(3);
  });

  it('uploads stdout and stderr whole, from memory when small and from a spill file when large, and leaves no file behind', async () => {
    const cluster = await startClusterForTest();
    await cluster.addExecutor();
    // 3 MB of stdout: beyond the executor's in-memory bound and beyond one batch blob.
    const actionDigest = await cluster.action({ ...sh('seq 1 400000; echo small >&2'), outputPaths: [] });
    const run = await execute(cluster, { instanceName: '', actionDigest });
    const result = run.response!.result!;
    expect(result.exitCode).toBe(0);
    const read = async (d: reapi.Digest) => {
      const outcome = await readStream(cluster.bs, { resourceName: `blobs/${d.hash}/${d.sizeBytes}` });
      if (!outcome.ok) throw new Error(outcome.message);
      return outcome.value;
    };
    const stdout = (await read(result.stdoutDigest!)).toString();
    expect(stdout.length).toBe(Number(result.stdoutDigest!.sizeBytes));
    expect(stdout.split('\n').length).toBe(400001);
    expect(stdout.endsWith('399999\n400000\n')).toBe(true);
    expect((await read(result.stderrDigest!)).toString()).toBe('small\n');
    expect(await cluster.executorLeftovers()).toEqual([]);
  });

  it('serves REAPI 2.0 clients (output_files / output_directories, Command.platform)', async () => {
    const cluster = await startClusterForTest();
    await cluster.addExecutor();
    const actionDigest = await cluster.action({
      ...sh('mkdir -p d && echo x > d/x && echo y > f && chmod +x f'),
      outputFiles: ['f'],
      outputDirectories: ['d'],
      platform: { properties: [{ name: 'OSFamily', value: 'linux' }] },
    });
    const { response } = await execute(cluster, { instanceName: '', actionDigest });
    expect(response!.result!.outputFiles).toEqual([expect.objectContaining({ path: 'f', isExecutable: true })]);
    expect(response!.result!.outputDirectories.map((d) => d.path)).toEqual(['d']);
  });

  it('does not cache a failing action nor a do_not_cache one', async () => {
    const cluster = await startClusterForTest();
    await cluster.addExecutor();
    const failing = await cluster.action(sh('echo boom >&2; exit 3'));
    const r = await execute(cluster, { instanceName: '', actionDigest: failing });
    expect(r.response!.result!.exitCode).toBe(3);
    expect((await call(cluster.ac, cluster.ac.GetActionResult, { instanceName: '', actionDigest: failing })).ok).toBe(false);
    const uncached = await cluster.action(sh('true'), {}, { doNotCache: true });
    await execute(cluster, { instanceName: '', actionDigest: uncached });
    expect((await call(cluster.ac, cluster.ac.GetActionResult, { instanceName: '', actionDigest: uncached })).ok).toBe(false);
  });

  it('reports an action that exceeds its timeout with DEADLINE_EXCEEDED', async () => {
    const cluster = await startClusterForTest();
    await cluster.addExecutor();
    const actionDigest = await cluster.action(sh('sleep 30'), {}, { timeout: { seconds: 0, nanos: 300_000_000 } });
    const { response } = await execute(cluster, { instanceName: '', actionDigest });
    expect(response!.status?.code).toBe(googleRpc.Code.DEADLINE_EXCEEDED);
  });

  it('answers missing inputs with FAILED_PRECONDITION and MISSING violations, before queueing', async () => {
    const cluster = await startClusterForTest();
    const { digestOf } = await import('../../../src/core/index.js');
    const absent = digestOf(Buffer.from('never uploaded'));
    const inputRootDigest = await cluster.upload(reapi.Directory.encode({ files: [{ name: 'a', digest: absent }] }));
    const commandDigest = await cluster.upload(reapi.Command.encode(sh('true')));
    const actionDigest = await cluster.upload(reapi.Action.encode({ commandDigest, inputRootDigest }));
    const { error } = await execute(cluster, { instanceName: '', actionDigest });
    expect(error?.code).toBe(grpc.status.FAILED_PRECONDITION);
    const details = statusDetails(error!.metadata)!;
    const failure = unpackAny(googleRpc.PreconditionFailure, details.details[0]!)!;
    expect(failure.violations.map((v) => [v.type, v.subject])).toEqual([['MISSING', `blobs/${absent.hash}/${absent.sizeBytes}`]]);
  });

  it('reconnects with WaitExecution, lists and gets operations, and answers NOT_FOUND for unknown names', async () => {
    const cluster = await startClusterForTest();
    const actionDigest = await cluster.action(sh('echo done'));
    const stream = cluster.exec.Execute({ instanceName: '', actionDigest });
    const name = await new Promise<string>((resolve) => stream.once('data', (op: { name: string }) => resolve(op.name)));
    stream.on('error', () => undefined); // our own cancellation
    stream.cancel();
    const listed = await must(cluster.ops, cluster.ops.ListOperations, { name: '', filter: '', pageSize: 0, pageToken: '' });
    expect(listed.operations.map((o) => o.name)).toContain(name);
    const waiting = collectStream(cluster.exec.WaitExecution({ name }));
    await cluster.addExecutor();
    const outcome = await waiting;
    expect(outcome.response!.result!.exitCode).toBe(0);
    const got = await must(cluster.ops, cluster.ops.GetOperation, { name });
    expect(got.done).toBe(true);
    const waited = await must(cluster.ops, cluster.ops.WaitOperation, { name, timeout: { seconds: 5 } });
    expect(waited.done).toBe(true);
    await must(cluster.ops, cluster.ops.DeleteOperation, { name });
    const gone = await call(cluster.ops, cluster.ops.GetOperation, { name });
    expect(gone.ok ? 'found' : gone.code).toBe(grpc.status.NOT_FOUND);
    const unknown = await collectStream(cluster.exec.WaitExecution({ name: 'operations/no-such-operation' }));
    expect(unknown.error?.code).toBe(grpc.status.NOT_FOUND);
  });

  it('CancelOperation ends the operation CANCELLED and stops the command', async () => {
    const cluster = await startClusterForTest();
    const executor = await cluster.addExecutor();
    const actionDigest = await cluster.action(sh('sleep 30'));
    const stream = cluster.exec.Execute({ instanceName: '', actionDigest });
    const outcome = collectStream(stream);
    const name = await new Promise<string>((resolve) => stream.once('data', (op: { name: string }) => resolve(op.name)));
    await until(() => executor.runningTasks > 0, 'the action to run');
    await must(cluster.ops, cluster.ops.CancelOperation, { name });
    expect((await outcome).response!.status?.code).toBe(googleRpc.Code.CANCELLED);
    await until(() => executor.runningTasks === 0, 'the cancelled action to stop');
  });

  it('advertises execution in Capabilities', async () => {
    const cluster = await startClusterForTest();
    const caps = await must(cluster.caps, cluster.caps.GetCapabilities, { instanceName: '' });
    expect(caps.executionCapabilities).toMatchObject({ execEnabled: true, digestFunction: reapi.DigestFunction_Value.SHA256 });
  });

  it('reads the invocation id from the request metadata header', async () => {
    const cluster = await startClusterForTest();
    await cluster.addExecutor();
    const actionDigest = await cluster.action(sh('true'));
    const metadata = new grpc.Metadata();
    metadata.set(REQUEST_METADATA_KEY, reapi.RequestMetadata.encode({ toolInvocationId: 'inv-1' }));
    const { response } = await execute(cluster, { instanceName: '', actionDigest }, metadata);
    expect(response!.result!.exitCode).toBe(0);
  });
});
