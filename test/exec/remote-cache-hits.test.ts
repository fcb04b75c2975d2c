import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Action } from '../../src/actions/index.js';
import type { Digest } from '../../src/core/index.js';
import { executeActions, type ExecutionOptions } from '../../src/exec/index.js';
import { parseRemoteEndpoint, RemoteClient, type ActionIdentity } from '../../src/remote/index.js';
import { startClusterForTest } from '../scheduler/execution/cluster-fixture.js';
import { genrule, makeWorkspace, out, RecordingReporter, type Workspace } from './fixtures.js';

const identity = { toolName: 'kiln', toolVersion: 'test', invocationId: 'inv-1', buildRequestId: 'req-1' };
let ws: Workspace | undefined;
afterEach(async () => {
  await ws?.cleanup();
  ws = undefined;
});

/** A client that counts the GetActionResult calls in flight at once. */
class CountingClient extends RemoteClient {
  inFlight = 0;
  maxInFlight = 0;

  override async getActionResult(actionDigest: Digest, action?: ActionIdentity) {
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      return await super.getActionResult(actionDigest, action);
    } finally {
      this.inFlight--;
    }
  }
}

describe('a fully cached build after its outputs and local caches are gone', () => {
  it('looks up more actions at once than it runs, and writes every output from the remote cache, verified, with its mode', { timeout: 60_000 }, async () => {
    const cluster = await startClusterForTest();
    ws = await makeWorkspace();
    // Independent actions (every one ready at once), half of them with executable outputs.
    const actions: Action[] = Array.from({ length: 80 }, (_, i) =>
      genrule(`//p${i}:g`, { outs: ['out.txt'], cmd: `echo output ${i} > ${out(`p${i}`, 'out.txt')}`, executable: i % 2 === 0 }),
    );
    const endpoint = parseRemoteEndpoint(`grpc://${cluster.address}`, '--remote_cache');
    const build = async (client: RemoteClient) => {
      const reporter = new RecordingReporter();
      const options: ExecutionOptions = {
        execRoot: ws!.execRoot,
        outputBase: ws!.outputBase,
        clientEnv: { PATH: '/usr/bin:/bin' },
        jobs: 2,
        strategies: { spawnStrategy: ['local'] },
        remote: { client, acceptCached: true, uploadLocalResults: true, localFallback: false },
      };
      try {
        return { summary: await executeActions(actions, options, reporter), reporter };
      } finally {
        client.close();
      }
    };
    const filled = await build(new RemoteClient({ cache: endpoint, instanceName: '', timeoutMs: 10_000, retries: 2, identity }));
    expect(filled.reporter.failures).toEqual([]);
    expect(filled.summary.processes.local).toBe(80);

    // As after `kiln clean`: no outputs, no local action cache, no digest cache.
    await rm(join(ws.execRoot, 'bazel-out'), { recursive: true, force: true });
    await rm(join(ws.outputBase, 'cache'), { recursive: true, force: true });
    const client = new CountingClient({ cache: endpoint, instanceName: '', timeoutMs: 10_000, retries: 2, identity });
    const cached = await build(client);
    expect(cached.reporter.failures).toEqual([]);
    expect(cached.summary.processes['remote cache hit']).toBe(80);
    // More than the 32 actions past their lookup (and far more than --jobs=2) were looked up at once.
    expect(client.maxInFlight).toBeGreaterThan(32);
    for (let i = 0; i < 80; i++) {
      const path = join(ws.execRoot, out(`p${i}`, 'out.txt'));
      expect(await readFile(path, 'utf8')).toBe(`output ${i}\n`);
      expect((await stat(path)).mode & 0o777).toBe(i % 2 === 0 ? 0o755 : 0o644);
    }
  });
});
