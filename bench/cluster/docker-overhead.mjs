#!/usr/bin/env node
// The Docker runner's overhead per action: the same no-op command (/bin/true, empty environment,
// empty build directory) run with the Docker runner and with the local runner (plain process), one
// at a time, medians compared; then through the scheduler with one Docker executor. Needs an engine
// and Kiln's base image:
//   eval "$(bash scripts/docker/start-dockerd.sh)"; export KILN_BASE_IMAGE="$(bash deploy/base-image/build.sh)"
//   node bench/cluster/docker-overhead.mjs [--actions N] [--slots N]      (after npm run build)
// See bench/cluster/README.md. Goal: at most 30 ms per action over the local runner (warm containers).
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { noOpRunRequest, parseArgs, startCluster } from './cluster-harness.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const { DockerRunner } = await import(join(repo, 'dist/executor/runners/docker-runner.js'));
const { LocalRunner } = await import(join(repo, 'dist/executor/runners/local-runner.js'));

const args = parseArgs(process.argv.slice(2));
const ACTIONS = Number(args['actions'] ?? 30);
const SLOTS = Number(args['slots'] ?? 4);
const dockerHost = process.env.KILN_DOCKER_HOST ?? process.env.DOCKER_HOST;
const image = process.env.KILN_BASE_IMAGE ?? 'kiln/base:latest';
if (!dockerHost) throw new Error('set DOCKER_HOST or KILN_DOCKER_HOST: eval "$(bash scripts/docker/start-dockerd.sh)"');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median wall time of `ACTIONS` sequential runs of /bin/true with `runner`, after two warm-ups. */
async function perAction(runner, buildDirectory) {
  const request = noOpRunRequest(buildDirectory, 60_000);
  const times = [];
  for (let i = 0; i < ACTIONS + 2; i++) {
    const t0 = performance.now();
    const r = await runner.run(request);
    if (r.exitCode !== 0) throw new Error(`${runner.name}: /bin/true exited ${r.exitCode}: ${r.stderr}`);
    if (i >= 2) times.push(performance.now() - t0);
  }
  return median(times);
}

const work = await mkdtemp(join(tmpdir(), 'kiln-bench-docker-'));
try {
  const buildDirectory = join(work, 'b');
  await mkdir(buildDirectory);
  await chmod(buildDirectory, 0o755);
  // Warm containers (the default) and a fresh container per action (`warm: false`, the runner before them).
  const docker = new DockerRunner({ dockerHost, defaultImage: image });
  const fresh = new DockerRunner({ dockerHost, defaultImage: image, warm: false });
  await docker.ping();
  const local = await LocalRunner.create({ sandbox: 'off' });
  const localMs = await perAction(local, buildDirectory);
  const freshMs = await perAction(fresh, buildDirectory);
  const dockerMs = await perAction(docker, buildDirectory);

  // Through the scheduler: one executor with the Docker runner, actions one at a time, then SLOTS at once.
  const cluster = await startCluster({ executors: 1, slots: SLOTS, work: join(work, 'c'), runner: () => docker });
  for (let i = 0; i < 2; i++) await cluster.runOne();
  const remote = [];
  for (let i = 0; i < ACTIONS; i++) {
    const t0 = performance.now();
    await cluster.runOne();
    remote.push(performance.now() - t0);
  }
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: SLOTS }, async () => {
      while (next < ACTIONS) {
        next++;
        await cluster.runOne();
      }
    }),
  );
  const perSecond = ACTIONS / ((performance.now() - t0) / 1000);
  await cluster.stop();
  await Promise.all([docker.close(), fresh.close(), local.close?.()]);

  console.log(
    `per action (median of ${ACTIONS}, /bin/true, image ${image}): local runner ${localMs.toFixed(1)} ms; docker runner, fresh container ${freshMs.toFixed(1)} ms (overhead ${(freshMs - localMs).toFixed(1)} ms), warm container ${dockerMs.toFixed(1)} ms (overhead ${(dockerMs - localMs).toFixed(1)} ms, goal <= 30 ms)`,
  );
  console.log(
    `through the scheduler, one docker executor: ${median(remote).toFixed(1)} ms per action one at a time; ${perSecond.toFixed(1)} actions/s with ${SLOTS} slots`,
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
