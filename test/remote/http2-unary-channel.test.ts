import * as grpc from '@grpc/grpc-js';
import { spawnSync } from 'node:child_process';
import * as http2 from 'node:http2';
import { createServer } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { digestOf, googleRpc, packAny, reapi } from '../../src/core/index.js';
import { Http2UnaryChannel } from '../../src/remote/grpc-unary/http2-unary-channel.js';
import { RemoteChannel, unaryCall } from '../../src/remote/remote-channel.js';
import { parseRemoteEndpoint, RemoteCallError, RemoteClient, Retrier, REQUEST_METADATA_KEY, requestMetadata } from '../../src/remote/index.js';
import { tlsMaterial } from '../../src/remote/remote-tls.js';
import { needTool } from '../setup/need-tool.js';
import { opensslAvailable } from '../scheduler/security/test-certificates.js';

const identity = { toolName: 'kiln', toolVersion: 'test', invocationId: 'inv-1', buildRequestId: 'req-1' };
const GET = reapi.ActionCacheService.GetActionResult;
const BATCH_READ = reapi.ContentAddressableStorageService.BatchReadBlobs;
const actionDigest = digestOf(Buffer.from('action'));
const stored: reapi.ActionResultInit = { exitCode: 3, stdoutRaw: Buffer.from('hello'), outputFiles: [{ path: 'out/a', digest: digestOf(Buffer.from('a')) }] };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-h2-unary-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

// biome-ignore lint/suspicious/noExplicitAny: one type for the handlers of several methods
type Handler = (call: grpc.ServerUnaryCall<any, unknown>, callback: grpc.sendUnaryData<unknown>) => void;

/** A @grpc/grpc-js server with the ActionCache and CAS methods a test scripts, on `address` (an ephemeral loopback port by default). */
async function grpcServer(handlers: { get?: Handler; batchRead?: Handler }, address = '127.0.0.1:0', credentials = grpc.ServerCredentials.createInsecure()) {
  const server = new grpc.Server();
  const calls: grpc.ServerUnaryCall<reapi.GetActionResultRequest, unknown>[] = [];
  const record =
    (handler: Handler | undefined): Handler =>
    (call, callback) => {
      calls.push(call);
      if (handler) handler(call, callback);
      else callback({ code: grpc.status.UNIMPLEMENTED, details: 'not scripted' });
    };
  server.addService(reapi.ActionCacheService as unknown as grpc.ServiceDefinition, { GetActionResult: record(handlers.get) });
  server.addService(reapi.ContentAddressableStorageService as unknown as grpc.ServiceDefinition, { BatchReadBlobs: record(handlers.batchRead) });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync(address, credentials, (e, p) => (e ? reject(e) : resolve(p))));
  const stop = () => server.forceShutdown();
  cleanups.push(stop);
  return { port, calls, stop };
}

const answer =
  (result: reapi.ActionResultInit): Handler =>
  (_call, callback) =>
    callback(null, result);

/** A RemoteChannel to `url`, closed after the test. */
function channelTo(url: string, tls = {}): RemoteChannel {
  const channel = new RemoteChannel(parseRemoteEndpoint(url, '--remote_cache'), tls);
  cleanups.push(() => channel.close());
  return channel;
}

const getResult = (channel: RemoteChannel, metadata = new grpc.Metadata(), timeoutMs = 5000) =>
  unaryCall(channel, GET, { instanceName: 'main', actionDigest }, metadata, timeoutMs, `GetActionResult on ${channel.endpoint.url}`);

async function failureOf(promise: Promise<unknown>): Promise<RemoteCallError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RemoteCallError);
  return error as RemoteCallError;
}

/** Whether this host has an IPv6 loopback to listen on (some containers have none). */
const IPV6_LOOPBACK = await new Promise<boolean>((resolve) => {
  const probe = createServer();
  probe.once('error', () => resolve(false)).listen(0, '::1', () => probe.close(() => resolve(true)));
});

describe('Http2UnaryChannel against a @grpc/grpc-js server', () => {
  it('calls a method: the request and metadata reach the server (binary values equal), the answer is decoded', async () => {
    const server = await grpcServer({ get: answer(stored) });
    const channel = channelTo(`grpc://127.0.0.1:${server.port}`);
    const metadata = requestMetadata(
      identity,
      [
        ['x-team', 'build'],
        ['x-team', 'infra'],
      ],
      { actionId: 'a1', mnemonic: 'Genrule', targetId: '//p:g' },
    );
    metadata.set('x-blob-bin', Buffer.from([0, 1, 2, 255]));
    const result = await getResult(channel, metadata);
    expect(result).toEqual(reapi.ActionResult.decode(reapi.ActionResult.encode(stored)));
    const seen = server.calls[0]!;
    expect(seen.request).toMatchObject({ instanceName: 'main', actionDigest });
    expect(seen.metadata.get(REQUEST_METADATA_KEY)).toEqual(metadata.get(REQUEST_METADATA_KEY));
    expect(reapi.RequestMetadata.decode(seen.metadata.get(REQUEST_METADATA_KEY)[0] as Buffer)).toMatchObject({ actionId: 'a1', targetId: '//p:g' });
    expect(seen.metadata.get('x-blob-bin')).toEqual([Buffer.from([0, 1, 2, 255])]);
    expect(seen.metadata.get('x-team').join(',')).toBe('build, infra');
    expect(seen.metadata.get('user-agent')[0]).toMatch(/^kiln-http2-unary\//);
    expect(seen.getDeadline()).not.toBe(Infinity);
    // Later calls reuse the session.
    await getResult(channel);
    expect(new Set(server.calls.map((c) => c.getPeer())).size).toBe(1);
  });

  it("fails with the server's code and details; RetryInfo and PreconditionFailure reach the RemoteCallError", async () => {
    const missing = digestOf(Buffer.from('lost'));
    const trailers = new grpc.Metadata();
    const details = [
      packAny(googleRpc.RetryInfo, { retryDelay: { seconds: 2, nanos: 500_000_000 } }),
      packAny(googleRpc.PreconditionFailure, { violations: [{ type: 'MISSING', subject: `blobs/${missing.hash}/${missing.sizeBytes}` }] }),
    ];
    trailers.set('grpc-status-details-bin', googleRpc.Status.encode({ code: grpc.status.FAILED_PRECONDITION, message: 'lost blobs', details }));
    const answers = [
      { code: grpc.status.NOT_FOUND, details: 'no result for 1a2b/6, 50% sure' },
      { code: grpc.status.FAILED_PRECONDITION, details: 'lost blobs', metadata: trailers },
    ];
    const server = await grpcServer({ get: (_call, callback) => callback(answers.shift()!) });
    const channel = channelTo(`grpc://127.0.0.1:${server.port}`);
    const notFound = await failureOf(getResult(channel));
    expect(notFound.code).toBe(grpc.status.NOT_FOUND);
    expect(notFound.message).toBe(`GetActionResult on grpc://127.0.0.1:${server.port}: NOT_FOUND: no result for 1a2b/6, 50% sure`);
    const precondition = await failureOf(getResult(channel));
    expect(precondition.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(precondition.retryDelayMs).toBe(2500);
    expect(precondition.missingBlobs).toEqual([missing]);
  });

  it('ends a call at its deadline with DEADLINE_EXCEEDED and cancels it on the server', async () => {
    let cancelled = false;
    const server = await grpcServer({ get: (call) => call.on('cancelled', () => (cancelled = true)) });
    const channel = channelTo(`grpc://127.0.0.1:${server.port}`);
    const started = Date.now();
    const error = await failureOf(getResult(channel, new grpc.Metadata(), 200));
    expect(error.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(Date.now() - started).toBeLessThan(2000);
    await expect.poll(() => cancelled).toBe(true);
  });

  it('refuses a response above the receive limit (RESOURCE_EXHAUSTED) and receives a multi-MiB BatchReadBlobs answer whole', async () => {
    const blobs = [0, 1, 2].map((i) => Buffer.alloc(2 * 1024 * 1024 + i, `blob ${i}`));
    const server = await grpcServer({
      get: answer({ stdoutRaw: Buffer.alloc(4096, 'x') }),
      batchRead: (_call, callback) => callback(null, { responses: blobs.map((data) => ({ digest: digestOf(data), data, status: { code: 0 } })) }),
    });
    const endpoint = parseRemoteEndpoint(`grpc://127.0.0.1:${server.port}`, '--remote_cache');
    const small = new Http2UnaryChannel(endpoint, { maxReceiveBytes: 1024 });
    cleanups.push(() => small.close());
    await expect(small.call(GET, { actionDigest }, new grpc.Metadata())).rejects.toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: expect.stringMatching(/larger than max \(\d+ vs\. 1024\)/) as unknown,
    });
    const channel = channelTo(endpoint.url);
    const response = await unaryCall(channel, BATCH_READ, { digests: blobs.map((b) => digestOf(b)) }, new grpc.Metadata(), 10_000, 'BatchReadBlobs');
    expect(response.responses.map((r) => Buffer.from(r.data).equals(blobs[response.responses.indexOf(r)]!))).toEqual([true, true, true]);
  });

  it('fails UNAVAILABLE while the server is down, so the Retrier retries until it is up; a restarted server gets a new session', async () => {
    const probe = await grpcServer({});
    const port = probe.port;
    probe.stop();
    const channel = channelTo(`grpc://127.0.0.1:${port}`);
    const down = await failureOf(getResult(channel));
    expect(down.code).toBe(grpc.status.UNAVAILABLE);
    expect(down.message).toMatch(/ECONNREFUSED/);

    let server: Awaited<ReturnType<typeof grpcServer>> | undefined;
    const delays: number[] = [];
    const retrier = new Retrier({ maxRetries: 5, initialDelayMs: 100, maxDelayMs: 5000, multiplier: 2, jitter: 0 }, async (ms) => {
      delays.push(ms);
      server ??= await grpcServer({ get: answer(stored) }, `127.0.0.1:${port}`);
    });
    expect((await retrier.run(() => getResult(channel))).exitCode).toBe(3);
    expect(delays).toEqual([100]);

    server!.stop();
    await grpcServer({ get: answer({ exitCode: 4 }) }, `127.0.0.1:${port}`);
    expect((await retrier.run(() => getResult(channel))).exitCode).toBe(4);
  });

  it('reaches a server on a unix socket', async () => {
    const dir = await tempDir();
    await grpcServer({ get: answer(stored) }, `unix://${join(dir, 'cas.sock')}`);
    expect((await getResult(channelTo(`unix://${join(dir, 'cas.sock')}`))).exitCode).toBe(3);
  });

  it.skipIf(!needTool('an IPv6 loopback (::1)', IPV6_LOOPBACK, 'give the host (or container) an IPv6 loopback'))(
    'reaches a server on an IPv6 literal',
    async () => {
      const server = await grpcServer({ get: answer(stored) }, '[::1]:0');
      expect((await getResult(channelTo(`grpc://[::1]:${server.port}`))).exitCode).toBe(3);
    },
  );

  it('holds the process open only while a call is in flight', async () => {
    let release: (() => void) | undefined;
    const server = await grpcServer({ get: (_call, callback) => (release = () => callback(null, stored)) });
    const channel = channelTo(`grpc://127.0.0.1:${server.port}`);
    const sockets = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
    const call = getResult(channel);
    await expect.poll(() => release).toBeDefined();
    const inFlight = sockets();
    release!();
    await call;
    expect(sockets()).toBe(inFlight - 1);
  });
});

const HAS_OPENSSL = opensslAvailable();

describe('Http2UnaryChannel over TLS', () => {
  it.skipIf(!HAS_OPENSSL)('trusts --tls_certificate or the extra CAs of NODE_EXTRA_CA_CERTS (passed on as KILN_EXTRA_CA_CERTS), and nothing else', async () => {
    const dir = await tempDir();
    const made = spawnSync('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
    ]);
    expect(made.status, made.stderr.toString()).toBe(0);
    const [cert, key] = [await readFile(join(dir, 'cert.pem')), await readFile(join(dir, 'key.pem'))];
    const server = await grpcServer({ get: answer(stored) }, '127.0.0.1:0', grpc.ServerCredentials.createSsl(null, [{ cert_chain: cert, private_key: key }]));
    const url = `grpcs://localhost:${server.port}`;
    expect((await getResult(channelTo(url, { certificate: join(dir, 'cert.pem') }))).exitCode).toBe(3);

    const untrusted = await failureOf(getResult(channelTo(url)));
    expect(untrusted.code).toBe(grpc.status.UNAVAILABLE);
    expect(untrusted.message).toMatch(/self[- ]signed certificate/);

    const endpoint = parseRemoteEndpoint(url, '--remote_cache');
    const extra = new Http2UnaryChannel(endpoint, { maxReceiveBytes: 1 << 20, tls: tlsMaterial({}, { KILN_EXTRA_CA_CERTS: join(dir, 'cert.pem') }) });
    cleanups.push(() => extra.close());
    expect((await extra.call(GET, { actionDigest }, new grpc.Metadata())).exitCode).toBe(3);
    expect(() => tlsMaterial({}, { KILN_EXTRA_CA_CERTS: join(dir, 'absent.pem') })).toThrow(
      /NODE_EXTRA_CA_CERTS.*absent\.pem: cannot read the file \(ENOENT\)/,
    );
  });
});

/** A bare HTTP/2 server whose every stream `answer` handles: for answers no gRPC server sends. */
async function http2Server(answer: (stream: http2.ServerHttp2Stream) => void) {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => sessions.add(session));
  server.on('stream', (stream) => {
    stream.on('error', () => undefined); // a reset the test makes
    answer(stream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    for (const session of sessions) session.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const port = (server.address() as { port: number }).port;
  const channel = new Http2UnaryChannel(parseRemoteEndpoint(`grpc://127.0.0.1:${port}`, '--remote_cache'), { maxReceiveBytes: 1 << 20 });
  cleanups.push(() => channel.close());
  return (deadline?: number) => channel.call(GET, { actionDigest }, new grpc.Metadata(), deadline);
}

function frame(bytes: Uint8Array, flag = 0): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flag;
  head.writeUInt32BE(bytes.length, 1);
  return Buffer.concat([head, bytes]);
}
const resultBytes = reapi.ActionResult.encode({ exitCode: 7 });
const OK_HEADERS = { ':status': 200, 'content-type': 'application/grpc' };

describe('Http2UnaryChannel on answers a gRPC server rarely sends', () => {
  it.each([
    [
      'a trailers-only error, grpc-message percent-decoded',
      (s: http2.ServerHttp2Stream) =>
        s.respond({ ...OK_HEADERS, 'grpc-status': '5', 'grpc-message': 'no%20such%20result%3A%20%E2%9C%93' }, { endStream: true }),
      grpc.status.NOT_FOUND,
      'no such result: ✓',
    ],
    [
      'HTTP 503 without a gRPC status',
      (s: http2.ServerHttp2Stream) => s.respond({ ':status': 503, 'content-type': 'text/html' }, { endStream: true }),
      grpc.status.UNAVAILABLE,
      'Received HTTP status code 503',
    ],
    [
      'HTTP 404 with a page',
      (s: http2.ServerHttp2Stream) => (s.respond({ ':status': 404, 'content-type': 'text/html' }), s.end('<html>not found</html>')),
      grpc.status.UNIMPLEMENTED,
      'Received HTTP status code 404',
    ],
    [
      'HTTP 401',
      (s: http2.ServerHttp2Stream) => s.respond({ ':status': 401 }, { endStream: true }),
      grpc.status.UNAUTHENTICATED,
      'Received HTTP status code 401',
    ],
    [
      'no status at all',
      (s: http2.ServerHttp2Stream) => (
        s.respond(OK_HEADERS, { waitForTrailers: true }), s.on('wantTrailers', () => s.sendTrailers({ 'x-other': '1' })), s.end(frame(resultBytes))
      ),
      grpc.status.UNKNOWN,
      'No status information received',
    ],
    ['REFUSED_STREAM', (s: http2.ServerHttp2Stream) => s.close(http2.constants.NGHTTP2_REFUSED_STREAM), grpc.status.UNAVAILABLE, 'Stream refused by server'],
    [
      'ENHANCE_YOUR_CALM',
      (s: http2.ServerHttp2Stream) => s.close(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM),
      grpc.status.RESOURCE_EXHAUSTED,
      'Bandwidth exhausted or memory limit exceeded',
    ],
    [
      'INADEQUATE_SECURITY',
      (s: http2.ServerHttp2Stream) => s.close(http2.constants.NGHTTP2_INADEQUATE_SECURITY),
      grpc.status.PERMISSION_DENIED,
      'Protocol not secure enough',
    ],
    ['CANCEL', (s: http2.ServerHttp2Stream) => s.close(http2.constants.NGHTTP2_CANCEL), grpc.status.CANCELLED, 'Call cancelled'],
    [
      'an end without trailers',
      (s: http2.ServerHttp2Stream) => (s.respond(OK_HEADERS), s.end(frame(resultBytes))),
      grpc.status.INTERNAL,
      'Received RST_STREAM with code 0 (Call ended without gRPC status)',
    ],
    [
      'PROTOCOL_ERROR',
      (s: http2.ServerHttp2Stream) => s.close(http2.constants.NGHTTP2_PROTOCOL_ERROR),
      grpc.status.INTERNAL,
      'Received RST_STREAM with code 1',
    ],
    [
      'a compressed message',
      (s: http2.ServerHttp2Stream) => withStatus(s, frame(resultBytes, 1)),
      grpc.status.INTERNAL,
      'Received compressed message but "grpc-encoding" header was identity',
    ],
    [
      'two messages',
      (s: http2.ServerHttp2Stream) => withStatus(s, Buffer.concat([frame(resultBytes), frame(resultBytes)])),
      grpc.status.UNIMPLEMENTED,
      'Too many responses received',
    ],
    ['no message with OK', (s: http2.ServerHttp2Stream) => withStatus(s, Buffer.alloc(0)), grpc.status.UNIMPLEMENTED, 'No message received'],
    [
      'a message that does not decode',
      (s: http2.ServerHttp2Stream) => withStatus(s, frame(Buffer.from([0xff, 0xff, 0xff]))),
      grpc.status.INTERNAL,
      expect.stringMatching(/^Response message parsing error/),
    ],
  ])('%s', async (_name, respond, code, details) => {
    const call = await http2Server(respond);
    await expect(call()).rejects.toMatchObject({ code, details });
  });

  it('receives a message split over many DATA frames, and the status from the trailers', async () => {
    const big = reapi.ActionResult.encode({ stdoutRaw: Buffer.alloc(300_000, 'o'), exitCode: 9 });
    const call = await http2Server((s) => {
      s.respond(OK_HEADERS, { waitForTrailers: true });
      s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
      const framed = frame(big);
      for (let at = 0; at < framed.length; at += 7001) s.write(framed.subarray(at, at + 7001));
      s.end();
    });
    const result = await call();
    expect(result.exitCode).toBe(9);
    expect(result.stdoutRaw.length).toBe(300_000);
  });

  it('fails UNAVAILABLE when the server drops the connection, and opens another for the next call', async () => {
    let calls = 0;
    const call = await http2Server((s) => {
      if (calls++ === 0) s.session!.destroy();
      else withStatus(s, frame(resultBytes));
    });
    await expect(call()).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    expect((await call()).exitCode).toBe(7);
  });

  it('treats GOAWAY as the end of the session: the next call opens another', async () => {
    const sessions = new Set<unknown>();
    const call = await http2Server((s) => {
      sessions.add(s.session);
      withStatus(s, frame(resultBytes));
      s.session!.goaway(http2.constants.NGHTTP2_NO_ERROR);
    });
    expect((await call()).exitCode).toBe(7);
    expect((await call()).exitCode).toBe(7);
    expect(sessions.size).toBe(2);
  });
});

/** Answers `body` with status OK in the trailers. */
function withStatus(s: http2.ServerHttp2Stream, body: Buffer): void {
  s.respond(OK_HEADERS, { waitForTrailers: true });
  s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
  s.end(body);
}

describe('RemoteClient over the lean transport', () => {
  it("sees the whole ActionCache round trip against Kiln's own cache server", { timeout: 30_000 }, async () => {
    const { startClusterForTest } = await import('../scheduler/execution/cluster-fixture.js');
    const cluster = await startClusterForTest();
    const client = new RemoteClient({
      cache: parseRemoteEndpoint(`grpc://${cluster.address}`, '--remote_cache'),
      instanceName: '',
      timeoutMs: 10_000,
      retries: 0,
      identity,
    });
    cleanups.push(() => client.close());
    const digest = await cluster.upload('an action');
    expect(await client.getActionResult(digest)).toBeUndefined();
    const output = await cluster.upload('its output');
    await client.updateActionResult(digest, { exitCode: 0, outputFiles: [{ path: 'out/x', digest: output }] });
    expect((await client.getActionResult(digest))?.outputFiles.map((f) => f.path)).toEqual(['out/x']);
    expect((await client.read(output)).toString()).toBe('its output');
  });
});
