import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { digestOf, digestKey } from '../../src/core/index.js';
import { main as executorMain } from '../../src/cli/commands/executor.js';
import type { CliIO } from '../../src/cli/io.js';
import { connect, must } from '../scheduler/cache-server-fixture.js';
import { E2eWorkspace, tempDir } from './e2e-workspace.js';
import { mirroredStorageConfig, startKilnCluster, startKilnStorage } from './kiln-cluster.js';

// An executor whose config names the cluster's storage ("storage": the same BlobAccess config as the
// scheduler's instance CAS) reads its inputs from and writes its outputs to the storage nodes
// itself, not through the scheduler. To see which way the bytes went, the scheduler mirrors its CAS
// over nodes A and B while the executor is given A alone: an output the executor made is then on A
// and not on B, which a write through the scheduler (to both) could not give. The build is right, and
// a second checkout hits the cache (the scheduler finds the outputs on A).

const WORKSPACE = {
  'MODULE.bazel': 'module(name = "direct")\n',
  'pkg/BUILD': [
    'genrule(name = "word", srcs = ["in.txt"], outs = ["word.txt"], cmd = "tr a-z A-Z < $< > $@")',
    'genrule(name = "twice", srcs = [":word"], outs = ["twice.txt"], cmd = "cat $< $< > $@")',
    '',
  ].join('\n'),
  'pkg/in.txt': 'straight to storage\n',
};

describe('an executor that reads and writes the storage nodes itself', () => {
  it('builds remotely with its outputs written straight to the node it was given', { timeout: 120_000 }, async () => {
    const dir = tempDir();
    chmodSync(dir, 0o755); // a root executor's sandboxed actions run as nobody
    const nodeA = await startKilnStorage(['--storage', join(dir, 'a')]);
    const nodeB = await startKilnStorage(['--storage', join(dir, 'b')]);
    const node = (endpoint: string, keyspace: 'cas' | 'ac') => ({ kind: 'grpc', endpoint, keyspace, retries: 0 });
    writeFileSync(join(dir, 'scheduler.json'), JSON.stringify(mirroredStorageConfig(nodeA.endpoint, nodeB.endpoint)));
    const cluster = await startKilnCluster(['--executors', '0', '--config', join(dir, 'scheduler.json')]);
    writeFileSync(
      join(dir, 'executor.json'),
      JSON.stringify({
        scheduler: cluster.endpoint,
        runner: 'local',
        slots: 2,
        name: 'direct',
        'work-dir': join(dir, 'work'),
        storage: node(nodeA.endpoint, 'cas'),
      }),
    );
    let log = '';
    let interrupt!: () => void;
    let working!: () => void;
    const started = new Promise<void>((resolve) => (working = resolve));
    const io: CliIO = {
      stdout: { write: () => undefined },
      stderr: {
        write: (c: string | Uint8Array) => {
          log += c.toString();
          if (/working for/.test(log)) working();
        },
      },
      cwd: dir,
      env: {},
      interrupted: new Promise<void>((resolve) => (interrupt = resolve)),
    };
    const exited = executorMain(['--config', join(dir, 'executor.json')], io);
    try {
      await Promise.race([started, exited.then((code) => Promise.reject(new Error(`the executor exited with ${code}: ${log}`)))]);
      const ws = new E2eWorkspace(WORKSPACE);
      const built = await ws.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//pkg:twice']);
      expect(built.code, built.stderr).toBe(0);
      expect(built.stderr).toContain('2 processes: 2 remote.');
      const twice = readFileSync(join(ws.root, 'kiln-bin/pkg/twice.txt'));
      expect(twice.toString()).toBe('STRAIGHT TO STORAGE\nSTRAIGHT TO STORAGE\n');

      // The executor's upload went to A only: B never saw it.
      const digest = digestOf(twice);
      const onNode = async (endpoint: string) => {
        const clients = connect(endpoint);
        try {
          const missing = await must(clients.cas, clients.cas.FindMissingBlobs.bind(clients.cas), { instanceName: '', blobDigests: [digest] });
          return missing.missingBlobDigests.length === 0;
        } finally {
          clients.close();
        }
      };
      expect(await onNode(nodeA.endpoint), digestKey(digest)).toBe(true);
      expect(await onNode(nodeB.endpoint), digestKey(digest)).toBe(false);

      const again = new E2eWorkspace(WORKSPACE);
      const hit = await again.kiln(['build', `--remote_executor=${cluster.endpoint}`, '//pkg:twice']);
      expect(hit.code, hit.stderr).toBe(0);
      expect(hit.stderr).toContain('2 processes: 2 remote cache hit.');
      expect(readFileSync(join(again.root, 'kiln-bin/pkg/twice.txt'))).toEqual(twice);
    } finally {
      interrupt();
      await exited;
    }
  });

  it('refuses a storage config that is wrong, naming the file and the field', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'executor.json'), JSON.stringify({ scheduler: 'grpc://127.0.0.1:1', storage: { kind: 'grpc' } }));
    let stderr = '';
    const io: CliIO = { stdout: { write: () => undefined }, stderr: { write: (c: string | Uint8Array) => (stderr += c.toString()) }, cwd: dir, env: {} };
    expect(await executorMain(['--config', 'executor.json'], io)).toBe(2);
    expect(stderr).toMatch(/executor\.json.*storage\.endpoint/);
  });
});
