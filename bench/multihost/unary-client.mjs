#!/usr/bin/env node
// One client of bench/multihost/run.mjs, run on host D: times N GetActionResult calls (C in flight)
// through Kiln's lean unary transport (src/remote/grpc-unary/), after a warm-up, and prints one JSON line
// {cpuUsPerCall, wallMs}. With --store it first stores the ActionResult the calls read (needs a
// cache-writer token when auth is on). Each call builds its RequestMetadata, as the client does.
//
//   node bench/multihost/unary-client.mjs --endpoint=grpcs://198.18.0.1:8980 [--ca=FILE] [--token=T]
//        [--calls=10000] [--in-flight=256] [--store]
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const flags = { calls: 10_000, 'in-flight': 256, store: false, ca: undefined, token: undefined, endpoint: undefined };
for (const a of process.argv.slice(2)) {
  const m = /^--(calls|in-flight|ca|token|endpoint|store)(?:=(.+))?$/.exec(a);
  if (!m) throw new Error(`unknown argument ${a}`);
  flags[m[1]] = m[1] === 'store' ? true : m[1] === 'calls' || m[1] === 'in-flight' ? Number(m[2]) : m[2];
}
if (!flags.endpoint) throw new Error('--endpoint is required');

const { reapi, digestOf } = await import(join(REPO, 'dist/src/core/index.js'));
const { parseRemoteEndpoint, requestMetadata } = await import(join(REPO, 'dist/src/remote/index.js'));
const { RemoteChannel, unaryCall } = await import(join(REPO, 'dist/src/remote/remote-channel.js'));

const identity = { toolName: 'kiln', toolVersion: 'bench', invocationId: 'inv', buildRequestId: 'req' };
const actionDigest = digestOf(Buffer.from('multihost bench action'));
const TIMEOUT_MS = 60_000;
const headers = flags.token ? [['authorization', `Bearer ${flags.token}`]] : [];
const metadataOf = (i) => {
  const metadata = requestMetadata(identity, [], { actionId: actionDigest.hash, mnemonic: 'Genrule', targetId: `//p${i % 1000}:g` });
  for (const [name, value] of headers) metadata.set(name, value);
  return metadata;
};

const channel = new RemoteChannel(parseRemoteEndpoint(flags.endpoint, '--endpoint'), flags.ca ? { certificate: flags.ca } : {});
const call = (method, request, i, what) => unaryCall(channel, method, request, metadataOf(i), TIMEOUT_MS, what);
if (flags.store)
  await call(reapi.ActionCacheService.UpdateActionResult, { instanceName: '', actionDigest, actionResult: { exitCode: 7 } }, 0, 'UpdateActionResult');

async function timed(calls) {
  let next = 0;
  const request = { instanceName: '', actionDigest, inlineStdout: false, inlineStderr: false };
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const worker = async () => {
    while (next < calls) {
      const result = await call(reapi.ActionCacheService.GetActionResult, request, next++, 'GetActionResult');
      if (result.exitCode !== 7) throw new Error(`unexpected answer ${JSON.stringify(result)}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(flags['in-flight'], calls) }, worker));
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  const used = process.cpuUsage(cpu);
  return { cpuUsPerCall: (used.user + used.system) / calls, wallMs };
}

await timed(2000); // warm-up: the connection (and its TLS handshake), JIT
console.log(JSON.stringify(await timed(flags.calls)));
channel.close();
