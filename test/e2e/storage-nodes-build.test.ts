import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace, tempDir } from './e2e-workspace.js';
import { mirroredStorageConfig, startKilnCluster, startKilnStorage } from './kiln-cluster.js';

const WORKSPACE = {
  'MODULE.bazel': 'module(name = "mirrored")\n',
  'pkg/BUILD': [
    'genrule(name = "small", outs = ["small.txt"], cmd = "echo small > $@")',
    // Over the 4 MiB batch limit: streamed through the scheduler to both storage nodes.
    'genrule(name = "large", outs = ["large.txt"], cmd = "head -c 6000000 /dev/zero | tr -c k k > $@")',
    'genrule(name = "both", srcs = [":small", ":large"], outs = ["both.txt"], cmd = "cat $(SRCS) | wc -c > $@")',
    '',
  ].join('\n'),
};

const summary = (stderr: string) => /INFO: \d+ process(?:es)?[:.][^\n]*/.exec(stderr)?.[0];

describe('kiln build against a scheduler whose CAS and action cache mirror two kiln storage nodes', () => {
  it('builds remotely, keeps the cache across a scheduler restart, and builds with one node down', { timeout: 180_000 }, async () => {
    const dir = tempDir();
    const nodeA = await startKilnStorage(['--storage', join(dir, 'a')]);
    const nodeB = await startKilnStorage(['--storage', join(dir, 'b')]);
    writeFileSync(join(dir, 'scheduler.json'), JSON.stringify(mirroredStorageConfig(nodeA.endpoint, nodeB.endpoint)));
    const cluster = await startKilnCluster(['--executors', '1', '--runner', 'local', '--config', join(dir, 'scheduler.json')]);
    expect(cluster.log()).toContain('mirrored(a: grpc');
    const flags = [`--remote_executor=${cluster.endpoint}`, '//pkg:both'];

    const first = new E2eWorkspace(WORKSPACE);
    const built = await first.kiln(['build', ...flags]);
    expect(built.code, built.stderr).toBe(0);
    expect(summary(built.stderr)).toBe('INFO: 3 processes: 3 remote.');
    const both = readFileSync(join(first.root, 'kiln-bin/pkg/both.txt'), 'utf8');
    expect(both.trim()).toBe('6000006');

    // The scheduler forgets everything it held in memory; the storage nodes keep the cache.
    await cluster.restart();
    const second = new E2eWorkspace(WORKSPACE);
    const cached = await second.kiln(['build', ...flags]);
    expect(cached.code, cached.stderr).toBe(0);
    expect(summary(cached.stderr)).toBe('INFO: 3 processes: 3 remote cache hit.');
    expect(readFileSync(join(second.root, 'kiln-bin/pkg/large.txt')).length).toBe(6_000_000);

    // One node down: the build goes on through the other; back up, the node's gaps are filled from its mirror.
    await nodeB.stop();
    const changedFiles = { ...WORKSPACE, 'pkg/BUILD': WORKSPACE['pkg/BUILD'].replace('echo small', 'echo smaller') };
    const degraded = await new E2eWorkspace(changedFiles).kiln(['build', ...flags]);
    expect(degraded.code, degraded.stderr).toBe(0);
    expect(degraded.stderr).toMatch(/1 remote cache hit/);
    expect(degraded.stderr).toMatch(/2 remote\b/);
    await nodeB.restart();
    const again = new E2eWorkspace(changedFiles);
    const rebuilt = await again.kiln(['build', ...flags]);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(summary(rebuilt.stderr)).toBe('INFO: 3 processes: 3 remote cache hit.');
    expect(readFileSync(join(again.root, 'kiln-bin/pkg/both.txt'), 'utf8').trim()).toBe('6000008');
  });
});
