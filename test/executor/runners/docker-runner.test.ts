import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { availableParallelism, hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { FailedPreconditionError } from '../../../src/core/index.js';
import { containerImageOf } from '../../../executor/runners/container-image.js';
import { CONTAINER_LABEL, DockerRunner, OWNER_HOST_LABEL, OWNER_LABEL, OWNER_PID_LABEL } from '../../../executor/runners/docker-runner.js';
import type { RunRequest } from '../../../executor/runners/runner.js';
import { limitCases, TEST_LIMITS } from './limit-cases.js';
import { runnerCases } from './runner-cases.js';
import { needTool } from '../../setup/need-tool.js';
import { until } from '../../setup/until.js';

const dockerHost = process.env.KILN_DOCKER_HOST ?? '';
const baseImage = process.env.KILN_BASE_IMAGE ?? 'kiln/base:latest';

// Without Docker, returns before making a runner: vitest runs a describe's body even to skip it.
describe('DockerRunner', () => {
  if (!needTool('Docker', dockerHost !== '', 'KILN_DOCKER_HOST is unset; run scripts/test-setup.d/20-docker.sh (npm test does)')) return;
  const owner = `docker-runner-test-${process.pid}`;
  // The sweeping tests label as a host of their own: their sweeps never touch another test's containers.
  const testHost = `${hostname()}-test-${process.pid}`;
  const runner = new DockerRunner({ dockerHost, defaultImage: baseImage, limits: TEST_LIMITS, owner });
  const docker = new Docker({ socketPath: dockerHost.replace(/^unix:\/\//, '') });
  const ourContainers = () => docker.listContainers({ all: true, filters: { label: [`${OWNER_LABEL}=${owner}`] } });

  afterAll(async () => {
    // Every container the runner made, on success, failure and timeout alike, is gone once it closes.
    await runner.close();
    expect(await ourContainers()).toEqual([]);
  });

  runnerCases(() => runner, { confines: true, buildDirectoryPath: 'own' });
  limitCases(() => runner);

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
    // A watcher started before the bomb reads the container's pids cgroup with shell builtins only,
    // once the limit has refused a fork (an event, not a fixed wait: a loaded machine starts the bomb late).
    const r = await runner.run(
      sh(
        '( while read e < /sys/fs/cgroup/pids/pids.events && [ "$e" = "max 0" ]; do :; done; ' +
          'read c < /sys/fs/cgroup/pids/pids.current; read m < /sys/fs/cgroup/pids/pids.max; read e < /sys/fs/cgroup/pids/pids.events; echo "$c $m $e" ) & ' +
          'bomb() { bomb | bomb & }; bomb 2>/dev/null; sleep 10',
        { timeoutMs: 6000 },
      ),
    );
    expect(r.timedOut).toBe(true);
    const [current, max, , refused] = r.stdout.toString().trim().split(' ');
    expect(max).toBe('64');
    expect(Number(current)).toBeLessThanOrEqual(64);
    expect(Number(refused)).toBeGreaterThan(0);
  });

  it('applies the default limits when none are given: 1 GiB without swap, 256 pids, 2 CPUs', async () => {
    const plain = new DockerRunner({ dockerHost, defaultImage: baseImage, owner: `${owner}-defaults` });
    const abort = new AbortController();
    const run = plain.run({ ...sh('sleep 30'), signal: abort.signal });
    let containers: Docker.ContainerInfo[] = [];
    await until(
      async () => (containers = await docker.listContainers({ filters: { label: [`${OWNER_LABEL}=${owner}-defaults`] } })).length > 0,
      'the container to start',
    );
    const { HostConfig } = await docker.getContainer(containers[0]!.Id).inspect();
    abort.abort();
    await run;
    expect(HostConfig.Memory).toBe(1024 ** 3);
    expect(HostConfig.MemorySwap).toBe(1024 ** 3);
    expect(HostConfig.PidsLimit).toBe(256);
    expect(HostConfig.NanoCpus).toBe(Math.min(2, availableParallelism()) * 1e9);
  });

  it("removes its leftovers and, on close, its running containers, never another owner's", async () => {
    const mine = new DockerRunner({ dockerHost, defaultImage: baseImage, owner: `${owner}-mine`, hostName: testHost });
    const theirs = new DockerRunner({ dockerHost, defaultImage: baseImage, owner: `${owner}-theirs`, hostName: testHost });
    const running = (who: string) => docker.listContainers({ filters: { label: [`${OWNER_LABEL}=${owner}-${who}`] } });
    // Running means the action's own process has started: a warm container is up (its init alone)
    // before its `docker exec` begins, and removing it then fails the exec (126) instead of killing it.
    const actionStarted = async (id: string) => ((await docker.getContainer(id).top()).Processes?.length ?? 0) >= 2;
    const untilRunning = async (who: string, n: number) => {
      await until(async () => {
        const containers = await running(who);
        return containers.length === n && (await Promise.all(containers.map((c) => actionStarted(c.Id)))).every(Boolean);
      }, `${n} containers of ${who} running their action`);
    };
    // Their action in a build directory of its own, as two executors have.
    const theirDirectory = mkdtempSync(join(tmpdir(), 'kiln-build-'));
    chmodSync(theirDirectory, 0o755);
    const theirRun = theirs.run(sh('sleep 30', { buildDirectory: theirDirectory }));
    const myRun = mine.run(sh('sleep 30'));
    await untilRunning('mine', 1);
    await untilRunning('theirs', 1);
    // A new runner of the same owner (the executor restarted) removes what the old one left.
    const restarted = new DockerRunner({ dockerHost, defaultImage: baseImage, owner: `${owner}-mine`, hostName: testHost });
    expect(await restarted.removeLeftovers()).toBe(1);
    expect((await myRun).exitCode).toBe(137);
    expect(await running('theirs')).toHaveLength(1);
    const again = mine.run(sh('sleep 30'));
    await untilRunning('mine', 1);
    await mine.close();
    expect((await again).exitCode).toBe(137);
    expect(await running('theirs')).toHaveLength(1);
    await theirs.close();
    expect((await theirRun).exitCode).toBe(137);
    rmSync(theirDirectory, { recursive: true, force: true });
  });

  it('removes as leftovers the containers of dead executor processes of this host, not of live ones or other hosts', async () => {
    const dead = spawnSync('true').pid!;
    const start = async (labels: Record<string, string>) => {
      const container = await docker.createContainer({
        Image: baseImage,
        Cmd: ['sleep', '30'],
        Labels: { [CONTAINER_LABEL]: 'docker', [OWNER_LABEL]: `${owner}-someone`, ...labels },
        HostConfig: { NetworkMode: 'none' },
      });
      await container.start();
      return container.id;
    };
    const ofDeadProcess = await start({ [OWNER_HOST_LABEL]: testHost, [OWNER_PID_LABEL]: String(dead) });
    const ofLiveProcess = await start({ [OWNER_HOST_LABEL]: testHost, [OWNER_PID_LABEL]: String(process.pid) });
    const ofOtherHost = await start({ [OWNER_HOST_LABEL]: `not-${testHost}`, [OWNER_PID_LABEL]: String(dead) });
    try {
      const sweeper = new DockerRunner({ dockerHost, defaultImage: baseImage, owner: `${owner}-sweeper`, hostName: testHost });
      expect(await sweeper.removeLeftovers()).toBe(1);
      const left = (await docker.listContainers({ all: true, filters: { label: [`${OWNER_LABEL}=${owner}-someone`] } })).map((c) => c.Id);
      expect(left.sort()).toEqual([ofLiveProcess, ofOtherHost].sort());
      expect(left).not.toContain(ofDeadProcess);
    } finally {
      await Promise.all(
        [ofDeadProcess, ofLiveProcess, ofOtherHost].map((id) =>
          docker
            .getContainer(id)
            .remove({ force: true })
            .catch(() => undefined),
        ),
      );
    }
  });

  describe('warm containers', () => {
    // The container's init, by pid namespace and start time (a namespace's inode number is reused
    // once it is freed): equal in two actions means the second reused the first's container.
    const identity = 'echo "$(readlink /proc/1/ns/pid) $(cut -d" " -f22 /proc/1/stat)"';
    const containerOf = async (script: string, extra: Partial<RunRequest> = {}) => {
      const r = await runner.run(sh(`${identity}; ${script}`, extra));
      return { ...r, container: r.stdout.toString().split('\n')[0]!, rest: r.stdout.toString().split('\n').slice(1).join('\n') };
    };
    const processesBesideInit = 'for p in /proc/[0-9]*; do n=${p#/proc/}; [ "$n" = 1 ] || [ "$n" = $$ ] || echo "$n $(tr "\\0" " " < $p/cmdline)"; done';

    it('runs one action after another in the same started container', async () => {
      const a = await containerOf('true');
      const b = await containerOf('true');
      expect(a.container).toMatch(/^pid:\[\d+\] \d+$/);
      expect(b.container).toBe(a.container);
    });

    it('recycles a container whose action wrote outside its build directory: the next action sees none of it', async () => {
      const writer = await containerOf('echo secret > /tmp/left; mkdir /dev/shm/d 2>/dev/null; echo done');
      expect(writer.rest).toBe('done\n');
      const next = await containerOf('ls -A /tmp /dev/shm');
      expect(next.container).not.toBe(writer.container);
      expect(next.rest).toBe('/dev/shm:\n\n/tmp:\n');
    });

    it('recycles a container whose action left a process: it is killed before the run returns, and the next action sees no process', async () => {
      const marker = `kiln-warm-leftover-${process.pid}`;
      const leaver = await containerOf(`setsid bash -c 'sleep 100' ${marker} >/dev/null 2>&1 </dev/null & echo started`);
      expect(leaver.rest).toBe('started\n');
      const next = await containerOf(processesBesideInit);
      expect(next.container).not.toBe(leaver.container);
      expect(next.rest).toBe('');
    });

    it('keeps the root file system read-only and SysV IPC unavailable, so no trace survives there', async () => {
      const r = await runner.run(sh('touch /etc/kiln-x 2>&1; touch /home/kiln-x 2>&1; ipcmk -M 4096 2>&1; ipcmk -Q 2>&1; true'));
      const lines = r.stdout.toString().trim().split('\n');
      expect(lines[0]).toMatch(/Read-only file system/);
      expect(lines[1]).toMatch(/Read-only file system/);
      expect(lines[2]).toMatch(/failed/);
      expect(lines[3]).toMatch(/failed/);
    });

    it('recycles a container after its action limit, and kills a timed-out action with its container', async () => {
      const counting = new DockerRunner({ dockerHost, defaultImage: baseImage, limits: TEST_LIMITS, owner, warm: { maxActionsPerContainer: 2 } });
      try {
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) ids.push((await counting.run(sh(identity))).stdout.toString());
        expect(ids[1]).toBe(ids[0]);
        expect(ids[2]).not.toBe(ids[0]);
        const late = await counting.run(sh('sleep 100', { timeoutMs: 300 }));
        expect([late.timedOut, late.exitCode]).toEqual([true, 137]);
        const after = await counting.run(sh(identity));
        expect(after.stdout.toString()).not.toBe(ids[2]);
      } finally {
        await counting.close();
      }
    });

    it('moves the build directory back to its host path with the outputs, and leaves nothing beside it', async () => {
      const parent = mkdtempSync(join(tmpdir(), 'kiln-warm-parent-'));
      try {
        const dir = join(parent, 'b1');
        mkdirSync(dir, { mode: 0o755 });
        const r = await runner.run({ ...sh('echo out > o.txt; pwd'), buildDirectory: dir });
        expect(r.exitCode).toBe(0);
        expect(readFileSync(join(dir, 'o.txt'), 'utf8')).toBe('out\n');
        // The container's mount directory sits beside the build directories, the executor's own.
        const beside = readdirSync(parent).filter((n) => n !== 'b1');
        expect(beside).toHaveLength(1);
        // Every action sees its build directory at one container path.
        expect(r.stdout.toString()).toBe('/kiln/root\n');
        expect(readdirSync(join(parent, beside[0]!))).toEqual([]);
      } finally {
        rmSync(parent, { recursive: true, force: true });
      }
    });

    it('runs in a fresh container per action when warm containers are off', async () => {
      const fresh = new DockerRunner({ dockerHost, defaultImage: baseImage, limits: TEST_LIMITS, owner, warm: false });
      const a = await fresh.run(sh(`${identity}; pwd`));
      const b = await fresh.run(sh(identity));
      expect(a.stdout.toString().split('\n')[1]).toBe(buildDirectory);
      expect(b.stdout.toString()).not.toBe(a.stdout.toString().split('\n')[0]);
      await fresh.close();
    });
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
