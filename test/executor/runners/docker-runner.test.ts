import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { FailedPreconditionError } from '../../../src/core/index.js';
import { CONTAINER_LABEL, DockerRunner, containerImageOf } from '../../../executor/runners/docker-runner.js';
import type { RunRequest } from '../../../executor/runners/runner.js';
import { runnerCases } from './runner-cases.js';

const dockerHost = process.env.KILN_DOCKER_HOST;
const baseImage = process.env.KILN_BASE_IMAGE ?? 'kiln/base:latest';
if (!dockerHost && process.env.CI === 'true') {
  throw new Error('KILN_DOCKER_HOST is not set under CI: scripts/test-setup.d/20-docker.sh must run first (npm test does)');
}
if (!dockerHost) console.warn('skipping Docker runner tests: KILN_DOCKER_HOST is unset; run scripts/test-setup.d/20-docker.sh');

describe.skipIf(!dockerHost)('DockerRunner', () => {
  const runner = new DockerRunner({ dockerHost, defaultImage: baseImage, memoryBytes: 64 << 20, pidsLimit: 64, cpus: 1 });
  const docker = new Docker({ socketPath: (dockerHost ?? '').replace(/^unix:\/\//, '') });
  const ourContainers = () => docker.listContainers({ all: true, filters: { label: [CONTAINER_LABEL] } });

  afterAll(async () => {
    // Every container the runner made, on success, failure and timeout alike, is gone.
    expect(await ourContainers()).toEqual([]);
  });

  runnerCases(() => runner, { confines: true });

  let buildDirectory: string;
  beforeEach(() => {
    buildDirectory = mkdtempSync(join(tmpdir(), 'kiln-build-'));
    chmodSync(buildDirectory, 0o755);
  });
  afterEach(() => rmSync(buildDirectory, { recursive: true, force: true }));
  const sh = (script: string, extra: Partial<RunRequest> = {}): RunRequest => ({
    buildDirectory,
    arguments: ['bash', '-c', script],
    environment: { PATH: '/usr/bin:/bin' },
    workingDirectory: '',
    platform: [],
    timeoutMs: 20_000,
    stdout: { kind: 'buffer', limitBytes: 1 << 16 },
    stderr: { kind: 'buffer', limitBytes: 1 << 16 },
    ...extra,
  });

  it('bounds a fork bomb by the pids limit', async () => {
    // A watcher started before the bomb reads the container's pids cgroup with shell builtins only.
    const r = await runner.run(
      sh(
        '( sleep 1; read c < /sys/fs/cgroup/pids/pids.current; read m < /sys/fs/cgroup/pids/pids.max; read e < /sys/fs/cgroup/pids/pids.events; echo "$c $m $e" ) & ' +
          'bomb() { bomb | bomb & }; bomb 2>/dev/null; sleep 5',
        { timeoutMs: 2500 },
      ),
    );
    expect(r.timedOut).toBe(true);
    const [current, max, , refused] = r.stdout.toString().trim().split(' ');
    expect(max).toBe('64');
    expect(Number(current)).toBeLessThanOrEqual(64);
    expect(Number(refused)).toBeGreaterThan(0);
  });

  it('kills a command that allocates beyond the memory limit', async () => {
    const r = await runner.run(sh('x=$(head -c 200000000 /dev/zero | tr "\\0" a); echo ${#x}'));
    expect(r.exitCode).toBe(137);
    expect(r.outOfMemory).toBe(true);
    expect(r.stdout.toString()).toBe('');
  });

  it('takes the image from the container-image platform property', async () => {
    const r = await runner.run({ ...sh('echo ok'), platform: [{ name: 'container-image', value: `docker://${baseImage}` }] });
    expect(r.stdout.toString()).toBe('ok\n');
    expect(containerImageOf([{ name: 'OSFamily', value: 'Linux' }])).toBeUndefined();
  });

  it('names a missing image and how to get one', async () => {
    const run = runner.run({ ...sh('true'), platform: [{ name: 'container-image', value: 'kiln/no-such-image:1' }] });
    await expect(run).rejects.toBeInstanceOf(FailedPreconditionError);
    await expect(run).rejects.toThrow(/container image 'kiln\/no-such-image:1' is not in the Docker engine/);
  });

  it('truncates a buffer sink at its limit', async () => {
    const r = await runner.run(sh('head -c 100000 /dev/zero', { stdout: { kind: 'buffer', limitBytes: 1000 } }));
    expect(r.exitCode).toBe(0);
    expect(r.stdout.length).toBe(1000);
    expect(r.stdoutTruncated).toBe(true);
  });

  it('says how to start an engine when none answers', async () => {
    const absent = new DockerRunner({ dockerHost: `unix://${buildDirectory}/no.sock` });
    await expect(absent.ping()).rejects.toThrow(/no Docker engine answers at unix:.*start one with scripts\/docker\/start-dockerd.sh/);
  });
});
