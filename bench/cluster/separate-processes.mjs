#!/usr/bin/env node
// No-op actions per second through Kiln's cluster deployed as separate processes, as in production:
// `kiln cluster up --executors 0` (cache server + scheduler), N `kiln executor` processes, and this
// process as the client (fresh /bin/true actions, do_not_cache, CONCURRENCY in flight). Compare with
// noop-throughput.mjs, which runs all three in one process.
//
//   node bench/cluster/separate-processes.mjs [--executors=1] [--slots=4] [--actions=2000]
//                                             [--concurrency=64] [--sandbox=auto|off]
// --sandbox=off points the executors at no bubblewrap (KILN_BWRAP=/nonexistent): plain processes.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { connectClient, parseArgs, ratePerSecond } from './cluster-harness.mjs';
import * as harness from './cluster-harness.mjs';

const kiln = fileURLToPath(new URL('../../bin/kiln', import.meta.url));
const args = parseArgs(process.argv.slice(2));
const EXECUTORS = Number(args['executors'] ?? 1);
const SLOTS = Number(args['slots'] ?? 4);
const ACTIONS = Number(args['actions'] ?? 2000);
const CONCURRENCY = Number(args['concurrency'] ?? 64);
const SANDBOX = args['sandbox'] ?? 'auto';

const children = [];
function start(argv, env = process.env) {
  const child = spawn(kiln, argv, { stdio: ['ignore', 'pipe', 'ignore'], env });
  children.push(child);
  return child;
}

try {
  const cluster = start(['cluster', 'up', '--executors', '0', '--port', '0']);
  const [endpoint] = await once(createInterface({ input: cluster.stdout }), 'line');
  const executorEnv = SANDBOX === 'off' ? { ...process.env, KILN_BWRAP: '/nonexistent' } : process.env;
  for (let i = 0; i < EXECUTORS; i++) {
    const executor = start(['executor', '--scheduler', endpoint, '--slots', String(SLOTS), '--name', `bench-${i}`], executorEnv);
    executor.stdout.resume();
  }
  const client = await connectClient(endpoint);
  for (let i = 0; i < 20; i++) await client.runOne(); // every executor connected, connections and JIT warm
  const rate = await ratePerSecond(ACTIONS, CONCURRENCY, client.runOne);
  console.log(
    `no-op actions/s, separate processes (${EXECUTORS} executor(s) x ${SLOTS} slots, sandbox ${SANDBOX}, ${CONCURRENCY} in flight): ` +
      `${rate.toFixed(0)} (goal >= 500); client CPU ${harness.lastCpuMsPerCall.toFixed(2)} ms/action`,
  );
  client.close();
} finally {
  for (const child of children) child.kill('SIGINT');
  await Promise.all(children.map((c) => (c.exitCode === null ? once(c, 'exit') : undefined)));
}
