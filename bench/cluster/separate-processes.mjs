#!/usr/bin/env node
// No-op actions per second through Kiln's cluster deployed as separate processes, as in production:
// `kiln cluster up --executors 0` (cache server + scheduler), N `kiln executor` processes, and this
// process as the client (fresh /bin/true actions, do_not_cache, CONCURRENCY in flight). Compare with
// noop-throughput.mjs, which runs all three in one process. Prints the CPU per action of each
// process (from /proc: the server, the executors, and the /bin/true processes they reaped).
//
//   node bench/cluster/separate-processes.mjs [--executors=1] [--slots=4] [--actions=2000]
//                                             [--concurrency=64] [--sandbox=auto|off] [--warmup=20] [--cpu-prof=DIR]
// --sandbox=off points the executors at no bubblewrap (KILN_BWRAP=/nonexistent): plain processes.
// --cpu-prof=DIR writes V8 CPU profiles of the server and executor processes into DIR.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { connectClient, parseArgs, ratePerSecond } from './cluster-harness.mjs';
import * as harness from './cluster-harness.mjs';
import { machineCpu, processTreeCpuS } from '../common/cpu.mjs';

const kiln = fileURLToPath(new URL('../../bin/kiln', import.meta.url));
const args = parseArgs(process.argv.slice(2));
const EXECUTORS = Number(args['executors'] ?? 1);
const SLOTS = Number(args['slots'] ?? 4);
const ACTIONS = Number(args['actions'] ?? 2000);
const CONCURRENCY = Number(args['concurrency'] ?? 64);
const SANDBOX = args['sandbox'] ?? 'auto';
const PROFILE = args['cpu-prof'];
const WARMUP = Number(args['warmup'] ?? 20);

const children = [];
function start(argv, env = process.env) {
  // Node refuses --cpu-prof in NODE_OPTIONS: the profiled processes start without the shell launcher.
  const child = PROFILE
    ? spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${resolve(PROFILE)}`, `${kiln}.js`, ...argv], { stdio: ['ignore', 'pipe', 'ignore'], env })
    : spawn(kiln, argv, { stdio: ['ignore', 'pipe', 'ignore'], env });
  children.push(child);
  return child;
}

/** CPU ms of a process (bin/kiln execs node, so the pid is Node's), its helpers and what they reaped (the actions' /bin/true). */
function cpuOf(pid) {
  const { self, helpers, reaped } = processTreeCpuS(pid);
  return { self: self * 1000, helpers: helpers * 1000, reaped: reaped * 1000 };
}

try {
  const cluster = start(['cluster', 'up', '--executors', '0', '--port', '0']);
  const [endpoint] = await once(createInterface({ input: cluster.stdout }), 'line');
  const executorEnv = SANDBOX === 'off' ? { ...process.env, KILN_BWRAP: '/nonexistent' } : process.env;
  const executors = [];
  for (let i = 0; i < EXECUTORS; i++) {
    const executor = start(['executor', '--scheduler', endpoint, '--slots', String(SLOTS), '--name', `bench-${i}`], executorEnv);
    executor.stdout.resume();
    executors.push(executor);
  }
  const client = await connectClient(endpoint);
  // Every executor connected, connections and JIT warm (a deployed cluster runs for hours).
  await ratePerSecond(WARMUP, Math.min(WARMUP, CONCURRENCY), client.runOne);
  const serverBefore = cpuOf(cluster.pid);
  const executorsBefore = executors.map((e) => cpuOf(e.pid));
  const machineBefore = machineCpu();
  const rate = await ratePerSecond(ACTIONS, CONCURRENCY, client.runOne);
  const machine = machineCpu();
  const perAction = (ms) => (ms / ACTIONS).toFixed(2);
  const server = cpuOf(cluster.pid).self - serverBefore.self;
  const after = executors.map((e) => cpuOf(e.pid));
  const executorSelf = after.reduce((sum, c, i) => sum + c.self - executorsBefore[i].self, 0);
  const helpers = after.reduce((sum, c, i) => sum + c.helpers - executorsBefore[i].helpers, 0);
  const reaped = after.reduce((sum, c, i) => sum + c.reaped - executorsBefore[i].reaped, 0);
  console.log(
    `no-op actions/s, separate processes (${EXECUTORS} executor(s) x ${SLOTS} slots, sandbox ${SANDBOX}, ${CONCURRENCY} in flight): ` +
      `${rate.toFixed(0)} (goal >= 500)`,
  );
  console.log(
    `CPU ms/action: client ${harness.lastCpuMsPerCall.toFixed(2)}, server+scheduler ${perAction(server)}, ` +
      `executor(s) ${perAction(executorSelf)}, their helper processes ${perAction(helpers)}, ` +
      `the actions' processes ${perAction(reaped)}; ` +
      `machine busy ${perAction(machine.busy - machineBefore.busy)}, idle ${perAction(machine.idle - machineBefore.idle)}`,
  );
  client.close();
} finally {
  for (const child of children) child.kill('SIGINT');
  await Promise.all(children.map((c) => (c.exitCode === null ? once(c, 'exit') : undefined)));
}
