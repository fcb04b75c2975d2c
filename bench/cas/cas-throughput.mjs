#!/usr/bin/env node
// CAS throughput of `kiln cluster up` against the loopback TCP limit measured in the same run.
// Build first (npm run build). Usage: node bench/cas/cas-throughput.mjs [--size-mib N] [--small-count N]
//   [--concurrency N] [--storage blocks|disk|memory] [--chunk-kib N] [--read-chunk-kib N] [--blob-mib N] [--cpu-prof-dir DIR]. See bench/cas/README.md.
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const { reapi, bytestream } = await import(join(repo, 'dist/src/core/index.js'));

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const m = /^--([a-z-]+)=?(.*)$/.exec(a);
    if (!m) throw new Error(`bad argument ${a}`);
    return [m[1], m[2]];
  }),
);
const SIZE_MIB = Number(args['size-mib'] ?? 1024);
const SMALL_COUNT = Number(args['small-count'] ?? 100_000);
const CONCURRENCY = Number(args['concurrency'] ?? 16);
const STORAGE = args['storage'] ?? 'blocks';
const PROFILE_DIR = args['cpu-prof-dir'];
const CHUNK_KIB = Number(args['chunk-kib'] ?? 256);
/** Size of each large blob: 1 MiB (SIZE_MIB of them) by default; --blob-mib=1024 moves one 1 GiB blob. */
const BLOB_MIB = Number(args['blob-mib'] ?? 1);
const READ_CHUNK_KIB = args['read-chunk-kib'] === undefined ? undefined : Number(args['read-chunk-kib']);
const MIB = 1024 * 1024;

const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const mbps = (bytes, ms) => (bytes / 1e6 / (ms / 1000)).toFixed(1);

/** Loopback limit: a child process sinks what this process pumps through one TCP connection. */
async function loopbackLimit(totalBytes) {
  const sink = spawn(
    process.execPath,
    [
      '-e',
      `
    const net = require('node:net');
    const server = net.createServer((s) => { let n = 0; s.on('data', (d) => { n += d.length; }); s.on('end', () => s.end(String(n))); });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));
  `,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = Number(await firstLine(sink.stdout));
  const chunk = Buffer.alloc(MIB, 7);
  const start = performance.now();
  const received = await new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    socket.on('data', (d) => (reply += d));
    socket.on('end', () => resolve(Number(reply)));
    socket.on('error', reject);
    let sent = 0;
    const pump = () => {
      while (sent < totalBytes) {
        sent += chunk.length;
        if (!socket.write(chunk)) return socket.once('drain', pump);
      }
      socket.end();
    };
    socket.on('connect', pump);
  });
  const ms = performance.now() - start;
  sink.kill();
  if (received !== totalBytes) throw new Error(`loopback sink got ${received} of ${totalBytes} bytes`);
  return ms;
}

function firstLine(stream) {
  return new Promise((resolve, reject) => {
    let text = '';
    stream.on('data', function onData(d) {
      text += d;
      const nl = text.indexOf('\n');
      if (nl >= 0) {
        stream.off('data', onData);
        resolve(text.slice(0, nl).trim());
      }
    });
    stream.on('end', () => reject(new Error(`stream ended before a line: ${text}`)));
  });
}

async function peakRssMiB(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
  return hwm ? Number(hwm[1]) / 1024 : NaN;
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
async function cpuSeconds(pid) {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/** Runs `phase`, returning its wall time and the CPU seconds this process and the server used meanwhile. */
async function measured(serverPid, phase) {
  const serverBefore = await cpuSeconds(serverPid);
  const clientBefore = process.cpuUsage();
  const start = performance.now();
  await phase();
  const ms = performance.now() - start;
  const client = process.cpuUsage(clientBefore);
  return { ms, clientCpu: (client.user + client.system) / 1e6, serverCpu: (await cpuSeconds(serverPid)) - serverBefore };
}

async function pool(count, worker) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await worker(next++);
    }),
  );
}

const work = await mkdtemp(join(tmpdir(), 'kiln-bench-cas-'));
const serverArgs = [join(repo, 'bin/kiln.js'), 'cluster', 'up', '--port', '0'];
if (PROFILE_DIR) serverArgs.unshift('--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`);
const config = {};
if (STORAGE === 'blocks') serverArgs.push('--storage', join(work, 'store'));
// `disk` is one file per blob; it is chosen through the config file.
if (STORAGE === 'disk') config.storage = { kind: 'disk', path: join(work, 'store') };
if (READ_CHUNK_KIB) config.limits = { byteStreamChunkBytes: READ_CHUNK_KIB * 1024 };
if (Object.keys(config).length > 0) {
  await writeFile(join(work, 'kiln.json'), JSON.stringify(config));
  serverArgs.push('--config', join(work, 'kiln.json'));
}
const server = spawn(process.execPath, serverArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
let serverLog = '';
server.stderr.on('data', (d) => (serverLog += d));
try {
  const endpoint = await firstLine(server.stdout);
  const address = endpoint.replace('grpc://', '');
  const make = (def, name) =>
    new (grpc.makeGenericClientConstructor(def, name))(address, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 64 * MIB,
      'grpc-node.flow_control_window': 32 * MIB,
      'grpc.max_send_message_length': 64 * MIB,
    });
  const cas = make(reapi.ContentAddressableStorageService, 'CAS');
  const bs = make(bytestream.ByteStreamService, 'ByteStream');
  const unary = (client, method, request) => new Promise((resolve, reject) => client[method](request, (err, res) => (err ? reject(err) : resolve(res))));

  // Loopback limit, same volume as the large-blob phase.
  const loopMs = await loopbackLimit(SIZE_MIB * MIB);
  const loopMBps = mbps(SIZE_MIB * MIB, loopMs);

  // Large blobs: SIZE_MIB / BLOB_MIB blobs of BLOB_MIB MiB, made of 1 MiB chunks distinct by a counter
  // (blob, chunk) in their first bytes, generated as they are sent (a 1 GiB blob is never in memory whole).
  const base = Buffer.alloc(MIB);
  for (let i = 0; i < base.length; i += 32) createHash('sha256').update(String(i)).digest().copy(base, i);
  const BLOBS = Math.max(1, Math.floor(SIZE_MIB / BLOB_MIB));
  const chunkOf = (i, j) => {
    const data = Buffer.from(base);
    data.writeUInt32BE(i, 0);
    data.writeUInt32BE(j, 4);
    return data;
  };
  // SHA-256 of the same bytes in this process, one core: the floor the server's CPU per GiB is judged against.
  const shaStart = process.cpuUsage();
  const digests = Array.from({ length: BLOBS }, (_, i) => {
    const h = createHash('sha256');
    for (let j = 0; j < BLOB_MIB; j++) h.update(chunkOf(i, j));
    return { hash: h.digest('hex'), sizeBytes: BLOB_MIB * MIB };
  });
  const shaCpu = process.cpuUsage(shaStart);
  const shaFloorPerGiB = ((shaCpu.user + shaCpu.system) / 1e6) * (1024 / (BLOBS * BLOB_MIB));
  const up = await measured(server.pid, () =>
    pool(
      BLOBS,
      (i) =>
        new Promise((resolve, reject) => {
          const d = digests[i];
          const stream = bs.Write((err) => (err ? reject(err) : resolve()));
          const piece = CHUNK_KIB * 1024;
          const size = BLOB_MIB * MIB;
          let off = 0;
          // Pieces as the stream takes them (a 1 GiB blob would otherwise queue whole in the client).
          const pump = () => {
            while (off < size) {
              const chunk = chunkOf(i, Math.floor(off / MIB));
              const within = off % MIB;
              const data = chunk.subarray(within, Math.min(MIB, within + piece));
              const ok = stream.write({
                resourceName: off === 0 ? `uploads/${randomUUID()}/blobs/${d.hash}/${d.sizeBytes}` : '',
                writeOffset: off,
                data,
                finishWrite: off + data.length >= size,
              });
              off += data.length;
              if (!ok && off < size) return void stream.once('drain', pump);
            }
            stream.end();
          };
          pump();
        }),
    ),
  );
  let downBytes = 0;
  const down = await measured(server.pid, () =>
    pool(
      BLOBS,
      (i) =>
        new Promise((resolve, reject) => {
          const d = digests[i];
          const stream = bs.Read({ resourceName: `blobs/${d.hash}/${d.sizeBytes}` });
          stream.on('data', (r) => (downBytes += r.data.length));
          stream.on('end', resolve);
          stream.on('error', reject);
        }),
    ),
  );
  if (downBytes !== BLOBS * BLOB_MIB * MIB) throw new Error(`downloaded ${downBytes} bytes, expected ${BLOBS * BLOB_MIB * MIB}`);
  const rssAfterLarge = await peakRssMiB(server.pid);

  // Small blobs: SMALL_COUNT blobs of 1 KiB in batches of 2000 (2 MB, under the 4 MiB batch limit).
  const BATCH = 2000;
  const small = Array.from({ length: SMALL_COUNT }, (_, i) => {
    const data = Buffer.alloc(1024, `small-${i}-`);
    return { digest: { hash: sha256(data), sizeBytes: 1024 }, data };
  });
  const batches = Math.ceil(SMALL_COUNT / BATCH);
  const smallUp = await measured(server.pid, () =>
    pool(batches, async (b) => {
      const res = await unary(cas, 'BatchUpdateBlobs', { requests: small.slice(b * BATCH, (b + 1) * BATCH) });
      if (res.responses.some((r) => r.status?.code !== 0)) throw new Error('a small blob upload failed');
    }),
  );
  const smallDown = await measured(server.pid, () =>
    pool(batches, async (b) => {
      const res = await unary(cas, 'BatchReadBlobs', { digests: small.slice(b * BATCH, (b + 1) * BATCH).map((s) => s.digest) });
      if (res.responses.some((r) => r.status?.code !== 0 || r.data.length !== 1024)) throw new Error('a small blob read failed');
    }),
  );
  const rssPeak = await peakRssMiB(server.pid);
  cas.close();
  bs.close();

  const pct = (ms) => ((loopMs / ms) * 100).toFixed(0);
  const cpu = (m) => `cpu: server ${m.serverCpu.toFixed(1)} s, client ${m.clientCpu.toFixed(1)} s in ${(m.ms / 1000).toFixed(1)} s`;
  console.log(
    `kiln CAS benchmark (${STORAGE} storage, ${CONCURRENCY} concurrent streams/batches, ${CHUNK_KIB} KiB write messages, ${READ_CHUNK_KIB ?? 'default'} KiB read chunks)`,
  );
  console.log(`loopback TCP limit:        ${loopMBps} MB/s (${SIZE_MIB} MiB through one socket)`);
  const perGiB = (m) => (m.serverCpu * 1024) / (BLOBS * BLOB_MIB);
  const vsFloor = (m) => `server ${perGiB(m).toFixed(2)} s CPU per GiB = ${(perGiB(m) / shaFloorPerGiB).toFixed(1)} x the SHA-256 floor (goal <= 2)`;
  console.log(`SHA-256 floor:             ${shaFloorPerGiB.toFixed(2)} s CPU per GiB (this process, one core, the same bytes)`);
  console.log(
    `ByteStream upload:         ${mbps(SIZE_MIB * MIB, up.ms)} MB/s  = ${pct(up.ms)}% of loopback  (${BLOBS} x ${BLOB_MIB} MiB)   ${vsFloor(up)}   ${cpu(up)}`,
  );
  console.log(`ByteStream download:       ${mbps(SIZE_MIB * MIB, down.ms)} MB/s  = ${pct(down.ms)}% of loopback   ${vsFloor(down)}   ${cpu(down)}`);
  console.log(
    `BatchUpdateBlobs (1 KiB):  ${Math.round(SMALL_COUNT / (smallUp.ms / 1000))} blobs/s  (${SMALL_COUNT} blobs)       goal >= 20000   ${cpu(smallUp)}`,
  );
  console.log(`BatchReadBlobs (1 KiB):    ${Math.round(SMALL_COUNT / (smallDown.ms / 1000))} blobs/s                        goal >= 20000   ${cpu(smallDown)}`);
  console.log(`server peak RSS:           ${rssAfterLarge.toFixed(0)} MiB after the large blobs, ${rssPeak.toFixed(0)} MiB overall   goal < 300 MiB`);
} catch (e) {
  console.error(`benchmark failed: ${e.message}\n--- server log ---\n${serverLog}`);
  process.exitCode = 1;
} finally {
  server.kill('SIGINT');
  await new Promise((resolve) => server.once('close', resolve));
  await rm(work, { recursive: true, force: true });
}
