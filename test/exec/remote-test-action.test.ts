import { afterEach, describe, expect, it } from 'vitest';
import { computeActionKey, type Action } from '../../src/actions/index.js';
import { actionEnvironment, executeActions } from '../../src/exec/index.js';
import { parseRemoteEndpoint, RemoteClient } from '../../src/remote/index.js';
import { startClusterForTest } from '../scheduler/execution/cluster-fixture.js';
import { genrule, makeWorkspace, out, RecordingReporter, type Workspace } from './fixtures.js';

const identity = { toolName: 'kiln', toolVersion: 'test', invocationId: 'inv-1', buildRequestId: 'req-1' };
let ws: Workspace | undefined;
afterEach(async () => {
  await ws?.cleanup();
  ws = undefined;
});

describe('a test action on a remote executor', () => {
  it('never takes a failed result the server answers from its cache: it executes again, skipping the cache', { timeout: 30_000 }, async () => {
    const cluster = await startClusterForTest();
    await cluster.addExecutor();
    ws = await makeWorkspace();
    // A test run (exit code as result) that passes when it really runs.
    const test: Action = {
      ...genrule('//pkg:t', { outs: ['t.log'], cmd: `echo ran > ${out('pkg', 't.log')}`, mnemonic: 'TestRunner' }),
      exitCodeIsResult: true,
    };
    const clientEnv = { PATH: '/usr/bin:/bin' };
    const client = new RemoteClient({
      executor: parseRemoteEndpoint(`grpc://${cluster.address}`, '--remote_executor'),
      instanceName: '',
      timeoutMs: 10_000,
      retries: 2,
      identity,
    });
    try {
      // A server that keeps failed results (Kiln's does not; others may): one is stored for this very action.
      const key = computeActionKey(test, { env: actionEnvironment(test, clientEnv), inputs: [] });
      await client.uploadMissing([key.action, key.command].map((m) => ({ digest: m.digest, data: async () => m.data })));
      await client.updateActionResult(key.digest, { exitCode: 1 });
      expect((await client.getActionResult(key.digest))?.exitCode).toBe(1);

      const reporter = new RecordingReporter();
      const summary = await executeActions(
        [test],
        {
          execRoot: ws.execRoot,
          outputBase: ws.outputBase,
          clientEnv,
          strategies: { spawnStrategy: ['remote'] },
          remote: { client, acceptCached: true, uploadLocalResults: true, localFallback: false },
        },
        reporter,
      );
      expect(reporter.failures).toEqual([]);
      expect(summary.processes.remote).toBe(1);
      expect(await ws.read(out('pkg', 't.log'))).toBe('ran\n');
      // The real run passed, and the executor stored that result over the failed one.
      expect((await client.getActionResult(key.digest))?.exitCode).toBe(0);
    } finally {
      client.close();
    }
  });
});
