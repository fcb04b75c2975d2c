#!/usr/bin/env node
// Client CPU of a unary REAPI call: @grpc/grpc-js against the lean node:http2 transport
// (src/remote/grpc-unary/), on the call a fully cached build makes ~10^4 times: GetActionResult.
// Starts Kiln's cache server (`kiln cluster up --executors 0`), stores one ActionResult, then times N
// GetActionResult calls with C in flight through each transport, alternating them R times so that
// drift of the (shared) machine hits both alike. Each call builds its RequestMetadata, as the client does.
// The server's CPU per call (from /proc, 10 ms ticks) is the other half of a cache lookup's cost.
//
//   node bench/remote/unary-calls.mjs [--calls=10000] [--in-flight=256] [--rounds=3] [--kiln=PATH]
// Needs `npm run build` first (dist/ and bin/kiln).
import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processCpuS } from '../common/cpu.mjs';
import { startKilnCluster, stopKilnCluster } from '../common/kiln-cluster.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const flags = { calls: 10_000, 'in-flight': 256, rounds: 3, kiln: join(REPO, 'bin/kiln') };
for (const a of process.argv.slice(2)) {
  const m = /^--(calls|in-flight|rounds|kiln)=(.+)$/.exec(a);
  if (!m) throw new Error(`unknown argument ${a}`);
  flags[m[1]] = m[1] === 'kiln' ? m[2] : Number(m[2]);
}

const { reapi, digestOf } = await import(join(REPO, 'dist/src/core/index.js'));
const { parseRemoteEndpoint, requestMetadata } = await import(join(REPO, 'dist/src/remote/index.js'));
const { RemoteChannel, unaryCall } = await import(join(REPO, 'dist/src/remote/remote-channel.js'));

const identity = { toolName: 'kiln', toolVersion: 'bench', invocationId: 'inv', buildRequestId: 'req' };
const actionDigest = digestOf(Buffer.from('bench action'));
const request = { instanceName: '', actionDigest, inlineStdout: false, inlineStderr: false };
const metadataOf = (i) => requestMetadata(identity, [], { actionId: actionDigest.hash, mnemonic: 'Genrule', targetId: `//p${i % 1000}:g` });
const TIMEOUT_MS = 60_000;

/** The grpc-js path as RemoteChannel made it before: a generic client, the promise wrapper with a deadline. */
function grpcJsCaller(target) {
  const Ctor = grpc.makeGenericClientConstructor(reapi.ActionCacheService, 'ActionCache');
  const client = new Ctor(target, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': 64 * 1024 * 1024, 'grpc.enable_retries': 0 });
  return {
    call: (i) =>
      new Promise((resolve, reject) =>
        client.GetActionResult(request, metadataOf(i), { deadline: Date.now() + TIMEOUT_MS }, (err, res) => (err ? reject(err) : resolve(res))),
      ),
    close: () => client.close(),
  };
}

/** The lean path as the client takes it: RemoteChannel's unaryCall. */
function leanCaller(endpoint) {
  const channel = new RemoteChannel(endpoint);
  return {
    call: (i) => unaryCall(channel, reapi.ActionCacheService.GetActionResult, request, metadataOf(i), TIMEOUT_MS, 'GetActionResult'),
    close: () => channel.close(),
  };
}

/** `calls` calls, `inFlight` at a time; client CPU, the server's CPU (its process, `serverPid`) and wall. */
async function timed(caller, calls, inFlight, serverPid) {
  let next = 0;
  const serverCpuS = processCpuS(serverPid);
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const worker = async () => {
    while (next < calls) {
      const result = await caller.call(next++);
      if (result.exitCode !== 7) throw new Error(`unexpected answer ${JSON.stringify(result)}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, calls) }, worker));
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  const used = process.cpuUsage(cpu);
  const serverUsPerCall = ((processCpuS(serverPid) - serverCpuS) * 1e6) / calls;
  return { cpuUsPerCall: (used.user + used.system) / calls, serverUsPerCall, wallMs };
}

const dir = mkdtempSync(join(tmpdir(), 'kiln-bench-unary-'));
let cluster;
try {
  cluster = await startKilnCluster(flags.kiln, ['--executors', '0', '--port', '0', '--storage', join(dir, 'cas')]);
  const endpoint = parseRemoteEndpoint(cluster.endpoint.includes('://') ? cluster.endpoint : `grpc://${cluster.endpoint}`, '--remote_cache');
  const callers = { 'grpc-js': grpcJsCaller(endpoint.target), 'node:http2 (lean)': leanCaller(endpoint) };
  const setup = new RemoteChannel(endpoint);
  await unaryCall(
    setup,
    reapi.ActionCacheService.UpdateActionResult,
    { instanceName: '', actionDigest, actionResult: { exitCode: 7 } },
    metadataOf(0),
    TIMEOUT_MS,
    'UpdateActionResult',
  );
  setup.close();

  console.log(`${flags.calls} GetActionResult calls, ${flags['in-flight']} in flight, against ${endpoint.url}; ${flags.rounds} rounds, transports alternating`);
  const serverPid = cluster.child.pid;
  for (const caller of Object.values(callers)) await timed(caller, 2000, flags['in-flight'], serverPid); // warm-up: connections, JIT
  const results = Object.fromEntries(Object.keys(callers).map((name) => [name, []]));
  for (let round = 1; round <= flags.rounds; round++) {
    for (const [name, caller] of Object.entries(callers)) {
      const r = await timed(caller, flags.calls, flags['in-flight'], serverPid);
      results[name].push(r);
      console.log(
        `  round ${round}  ${name.padEnd(18)} client CPU ${r.cpuUsPerCall.toFixed(1).padStart(6)} us/call   server CPU ${r.serverUsPerCall.toFixed(0).padStart(4)} us/call   wall ${r.wallMs.toFixed(0).padStart(6)} ms   ${((flags.calls / r.wallMs) * 1000).toFixed(0)} calls/s`,
      );
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const summary = Object.fromEntries(
    Object.entries(results).map(([name, rs]) => [
      name,
      { cpu: median(rs.map((r) => r.cpuUsPerCall)), server: median(rs.map((r) => r.serverUsPerCall)), wall: median(rs.map((r) => r.wallMs)) },
    ]),
  );
  const [base, lean] = Object.values(summary);
  console.log('medians:');
  for (const [name, s] of Object.entries(summary))
    console.log(
      `  ${name.padEnd(18)} client CPU ${s.cpu.toFixed(1).padStart(6)} us/call   server CPU ${s.server.toFixed(0).padStart(4)} us/call   wall ${s.wall.toFixed(0).padStart(6)} ms`,
    );
  console.log(`lean / grpc-js: client CPU ${(lean.cpu / base.cpu).toFixed(2)}x, wall ${(lean.wall / base.wall).toFixed(2)}x`);
  for (const caller of Object.values(callers)) caller.close();
} finally {
  await stopKilnCluster(cluster);
  rmSync(dir, { recursive: true, force: true });
}
