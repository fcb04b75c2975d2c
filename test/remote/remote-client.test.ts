import * as grpc from '@grpc/grpc-js';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { computeActionKey, type Action } from '../../src/actions/index.js';
import { bytestream, digestOf, googleRpc, packAny, reapi, type Digest } from '../../src/core/index.js';
import {
  actionBlobs,
  downloadOutputs,
  parseRemoteEndpoint,
  REQUEST_METADATA_KEY,
  RemoteCallError,
  RemoteClient,
  Retrier,
  type RemoteOptions,
} from '../../src/remote/index.js';
import { startClusterForTest } from '../scheduler/execution/cluster-fixture.js';
import { opensslAvailable } from '../scheduler/security/test-certificates.js';

const identity = { toolName: 'kiln', toolVersion: 'test', invocationId: 'inv-1', buildRequestId: 'req-1' };
const temps: string[] = [];
afterEach(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-remote-'));
  temps.push(dir);
  return dir;
}

/** A Retrier that never sleeps and records the delays it would have waited. */
function recordingRetrier(maxRetries = 5): { retrier: Retrier; delays: number[] } {
  const delays: number[] = [];
  return {
    retrier: new Retrier(
      { maxRetries, initialDelayMs: 100, maxDelayMs: 5000, multiplier: 2, jitter: 0.1 },
      async (ms) => void delays.push(ms),
      () => 0.5,
    ),
    delays,
  };
}

/** A hand-written REAPI server whose Capabilities and FindMissingBlobs answer as a test scripts them. */
async function fakeServer(script: {
  capabilities?: (call: number) => grpc.ServiceError | undefined;
  findMissing?: (call: number) => grpc.ServiceError | undefined;
  tls?: { cert: Buffer; key: Buffer };
  /** What ByteStream.Read streams, whatever was asked. */
  read?: () => Buffer[];
  /** BatchReadBlobs: the answer for each digest asked for. */
  batchRead?: (digest: reapi.Digest) => { data?: Buffer; code?: grpc.status };
  maxBatchTotalSizeBytes?: number;
}) {
  const seen: grpc.Metadata[] = [];
  let capabilityCalls = 0;
  let findMissingCalls = 0;
  const server = new grpc.Server();
  server.addService(reapi.CapabilitiesService as unknown as grpc.ServiceDefinition, {
    GetCapabilities: (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      seen.push(call.metadata);
      const error = script.capabilities?.(capabilityCalls);
      capabilityCalls++;
      if (error) return callback(error);
      callback(null, {
        cacheCapabilities: { digestFunctions: [reapi.DigestFunction_Value.SHA256], maxBatchTotalSizeBytes: script.maxBatchTotalSizeBytes ?? 1 << 20 },
      });
    },
  });
  server.addService(bytestream.ByteStreamService as unknown as grpc.ServiceDefinition, {
    Read: (call: grpc.ServerWritableStream<unknown, unknown>) => {
      for (const data of script.read?.() ?? []) call.write({ data });
      call.end();
    },
  });
  const batchReads: reapi.Digest[][] = [];
  server.addService(reapi.ContentAddressableStorageService as unknown as grpc.ServiceDefinition, {
    BatchReadBlobs: (call: grpc.ServerUnaryCall<reapi.BatchReadBlobsRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      batchReads.push(call.request.digests);
      const responses = call.request.digests.map((digest) => {
        const answer = script.batchRead?.(digest) ?? { code: grpc.status.NOT_FOUND };
        return { digest, data: answer.data ?? Buffer.alloc(0), status: { code: answer.code ?? 0, message: answer.code ? 'scripted' : '' } };
      });
      callback(null, { responses });
    },
    FindMissingBlobs: (call: grpc.ServerUnaryCall<reapi.FindMissingBlobsRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      seen.push(call.metadata);
      const error = script.findMissing?.(findMissingCalls);
      findMissingCalls++;
      if (error) return callback(error);
      callback(null, { missingBlobDigests: [] });
    },
  });
  const credentials = script.tls
    ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: script.tls.cert, private_key: script.tls.key }])
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', credentials, (e, p) => (e ? reject(e) : resolve(p))));
  return {
    endpoint: parseRemoteEndpoint(script.tls ? `grpcs://localhost:${port}` : `grpc://127.0.0.1:${port}`, '--remote_cache'),
    seen,
    batchReads,
    calls: () => ({ capabilities: capabilityCalls, findMissing: findMissingCalls }),
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

const statusError = (code: grpc.status, details: string, metadata = new grpc.Metadata()): grpc.ServiceError =>
  Object.assign(new Error(details), { code, details, metadata }) as grpc.ServiceError;

describe('RemoteClient against a scripted server', () => {
  it('asks GetCapabilities once, sends RequestMetadata and the user headers on every call', async () => {
    const server = await fakeServer({});
    const options: RemoteOptions = {
      cache: server.endpoint,
      instanceName: '',
      timeoutMs: 5000,
      retries: 0,
      identity,
      headers: { common: [['x-team', 'build']], cache: [['x-cache', 'yes']], exec: [['x-exec', 'no']] },
    };
    const client = new RemoteClient(options);
    try {
      const blob = { digest: digestOf(Buffer.from('abc')), data: async () => Buffer.from('abc') };
      await client.uploadMissing([blob], { actionId: 'a1', mnemonic: 'Genrule', targetId: '//p:g' });
      await client.uploadMissing([{ ...blob, digest: digestOf(Buffer.from('other')) }]);
      expect(server.calls()).toEqual({ capabilities: 1, findMissing: 2 });
      for (const metadata of server.seen) {
        const decoded = reapi.RequestMetadata.decode(metadata.get(REQUEST_METADATA_KEY)[0] as Buffer);
        expect(decoded.toolDetails).toMatchObject({ toolName: 'kiln', toolVersion: 'test' });
        expect(decoded.toolInvocationId).toBe('inv-1');
        expect(decoded.correlatedInvocationsId).toBe('req-1');
        expect(metadata.get('x-team')).toEqual(['build']);
        expect(metadata.get('x-cache')).toEqual(['yes']);
        expect(metadata.get('x-exec')).toEqual([]);
      }
      const forAction = reapi.RequestMetadata.decode(server.seen[1]!.get(REQUEST_METADATA_KEY)[0] as Buffer);
      expect(forAction).toMatchObject({ actionId: 'a1', actionMnemonic: 'Genrule', targetId: '//p:g' });
    } finally {
      client.close();
      await server.stop();
    }
  });

  it('retries UNAVAILABLE and ABORTED with growing delays, and RESOURCE_EXHAUSTED no sooner than its RetryInfo says', async () => {
    const retryInfo = new grpc.Metadata();
    retryInfo.set(
      'grpc-status-details-bin',
      googleRpc.Status.encode({ code: 8, message: 'busy', details: [packAny(googleRpc.RetryInfo, { retryDelay: { seconds: 3, nanos: 0 } })] }),
    );
    const failures = [
      statusError(grpc.status.UNAVAILABLE, 'restarting'),
      statusError(grpc.status.ABORTED, 'aborted'),
      statusError(grpc.status.RESOURCE_EXHAUSTED, 'busy', retryInfo),
    ];
    const server = await fakeServer({ findMissing: (n) => failures[n] });
    const { retrier, delays } = recordingRetrier();
    const client = new RemoteClient({ cache: server.endpoint, instanceName: '', timeoutMs: 5000, retries: 5, identity }, retrier);
    try {
      await client.uploadMissing([{ digest: digestOf(Buffer.from('x')), data: async () => Buffer.from('x') }]);
      expect(server.calls().findMissing).toBe(4);
      expect(delays).toEqual([100, 200, 3000]);
    } finally {
      client.close();
      await server.stop();
    }
  });

  it('gives up after --remote_retries, and never retries a permanent error; the code is kept', async () => {
    const server = await fakeServer({
      findMissing: (n) => (n < 10 ? statusError(n < 3 ? grpc.status.UNAVAILABLE : grpc.status.INVALID_ARGUMENT, 'nope') : undefined),
    });
    const { retrier, delays } = recordingRetrier(2);
    const client = new RemoteClient({ cache: server.endpoint, instanceName: '', timeoutMs: 5000, retries: 2, identity }, retrier);
    try {
      const error = await client.uploadMissing([{ digest: digestOf(Buffer.from('x')), data: async () => Buffer.from('x') }]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RemoteCallError);
      expect((error as RemoteCallError).code).toBe(grpc.status.UNAVAILABLE);
      expect((error as RemoteCallError).message).toContain(`FindMissingBlobs on ${server.endpoint.url}: UNAVAILABLE: nope`);
      expect(delays).toHaveLength(2);
      const permanent = await client.uploadMissing([{ digest: digestOf(Buffer.from('y')), data: async () => Buffer.from('y') }]).catch((e: unknown) => e);
      expect((permanent as RemoteCallError).code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(server.calls().findMissing).toBe(4);
    } finally {
      client.close();
      await server.stop();
    }
  });
});

describe('reads of small blobs', () => {
  it('go out together in few BatchReadBlobs requests within the batch limit, one entry per digest, each blob checked on its own', async () => {
    const blobs = Array.from({ length: 40 }, (_, i) => Buffer.from(`blob ${i} `.repeat(12)));
    const byHash = new Map(blobs.map((b) => [digestOf(b).hash, b]));
    const [missing, corrupt, flaky] = [Buffer.from('missing'), Buffer.from('corrupt'), Buffer.from('flaky')];
    let flakyAnswers = 0;
    const server = await fakeServer({
      maxBatchTotalSizeBytes: 4096,
      batchRead: (d) => {
        if (d.hash === digestOf(corrupt).hash) return { data: Buffer.from('tampered') };
        if (d.hash === digestOf(flaky).hash) return flakyAnswers++ === 0 ? { code: grpc.status.UNAVAILABLE } : { data: flaky };
        const data = byHash.get(d.hash);
        return data ? { data } : { code: grpc.status.NOT_FOUND };
      },
    });
    const { retrier, delays } = recordingRetrier();
    const client = new RemoteClient({ cache: server.endpoint, instanceName: '', timeoutMs: 5000, retries: 5, identity }, retrier);
    try {
      await client.capabilities();
      const reads = blobs.map((b) => client.read(digestOf(b)));
      const again = client.read(digestOf(blobs[0]!));
      const failures = [missing, corrupt].map((b) => client.read(digestOf(b)).catch((e: unknown) => e as RemoteCallError));
      const retried = client.read(digestOf(flaky));
      expect((await Promise.all(reads)).map((b) => b.toString())).toEqual(blobs.map((b) => b.toString()));
      expect((await again).equals(blobs[0]!)).toBe(true);
      expect((await retried).equals(flaky)).toBe(true);
      const [notFound, tampered] = await Promise.all(failures);
      expect(notFound).toMatchObject({ code: grpc.status.NOT_FOUND, message: expect.stringContaining(server.endpoint.url) as unknown });
      expect(tampered).toMatchObject({ code: grpc.status.DATA_LOSS, message: expect.stringMatching(/does not match its digest/) as unknown });
      expect(delays).toEqual([100]);
      // 43 distinct blobs of about 100 bytes in batches of at most 4096 bytes (entries included), the flaky one asked twice.
      const asked = server.batchReads.flat().map((d) => d.hash);
      expect(asked).toHaveLength(44);
      expect(new Set(asked).size).toBe(43);
      expect(server.batchReads.length).toBeLessThanOrEqual(5);
      for (const batch of server.batchReads) expect(batch.reduce((n, d) => n + d.sizeBytes + 128, 0)).toBeLessThanOrEqual(4096);
    } finally {
      client.close();
      await server.stop();
    }
  });
});

const HAS_OPENSSL = opensslAvailable();

describe('a hostile or broken server', () => {
  it("cannot make the client hold more than a blob's digest says, nor pass off other bytes", async () => {
    const blob = Buffer.alloc(4096, 'b');
    const chunk = Buffer.alloc(4096, 'b');
    let reads = 0;
    // First three times the blob's size, then the right size with other bytes.
    const server = await fakeServer({ maxBatchTotalSizeBytes: 1024, read: () => (reads++ === 0 ? [chunk, chunk, chunk] : [chunk]) });
    const client = new RemoteClient({ cache: server.endpoint, instanceName: '', timeoutMs: 5000, retries: 0, identity });
    try {
      await expect(client.read(digestOf(blob))).rejects.toThrow(/more bytes than the digest's 4096/);
      const other = Buffer.alloc(4096, 'c');
      await expect(client.read(digestOf(other))).rejects.toThrow(/does not match its digest/);
    } finally {
      client.close();
      await server.stop();
    }
  });
});

describe('grpcs:// with --tls_certificate', () => {
  it.skipIf(!HAS_OPENSSL)('trusts the given certificate authority, and fails naming the endpoint without it', async () => {
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
    const tls = { cert: await readFile(join(dir, 'cert.pem')), key: await readFile(join(dir, 'key.pem')) };
    const server = await fakeServer({ tls });
    const options = { cache: server.endpoint, instanceName: '', timeoutMs: 5000, retries: 0, identity };
    const trusted = new RemoteClient({ ...options, tls: { certificate: join(dir, 'cert.pem') } });
    const untrusted = new RemoteClient(options);
    try {
      expect((await trusted.capabilities()).limits.maxBatchTotalSizeBytes).toBe(1 << 20);
      await expect(untrusted.capabilities()).rejects.toThrow(/Failed to query remote cache capabilities from grpcs:\/\/localhost:\d+: UNAVAILABLE/);
      expect(() => new RemoteClient({ ...options, tls: { clientKey: join(dir, 'key.pem') } })).toThrow(
        /--tls_client_certificate and --tls_client_key must be given together/,
      );
      expect(() => new RemoteClient({ ...options, tls: { certificate: join(dir, 'absent.pem') } })).toThrow(
        /--tls_certificate=.*absent\.pem: cannot read the file \(ENOENT\)/,
      );
    } finally {
      trusted.close();
      untrusted.close();
      await server.stop();
    }
  });
});

describe('RemoteClient against the scheduler and an executor', () => {
  const action: Action = {
    owner: '//p:g',
    mnemonic: 'Genrule',
    progressMessage: 'Executing genrule //p:g',
    argv: ['/bin/sh', '-c', 'mkdir -p bazel-out/k8-fastbuild/bin/p && cat p/in.txt p/in.txt > bazel-out/k8-fastbuild/bin/p/out.txt'],
    env: {},
    inputs: [{ kind: 'source', execPath: 'p/in.txt' }],
    outputs: [{ kind: 'derived', execPath: 'bazel-out/k8-fastbuild/bin/p/out.txt', root: 'bazel-out/k8-fastbuild/bin', owner: '//p:g' }],
    executionRequirements: [],
    executableOutputs: false,
  };

  it('uploads, executes, re-uploads an input the server lost after FindMissingBlobs, and downloads verified outputs', { timeout: 30_000 }, async () => {
    const cluster = await startClusterForTest();
    await cluster.addExecutor();
    const root = await tempDir();
    await mkdir(join(root, 'p'));
    await writeFile(join(root, 'p/in.txt'), 'lost\n');
    const inputs = [{ path: 'p/in.txt', digest: digestOf(Buffer.from('lost\n')), isExecutable: false }];
    const key = computeActionKey(action, { env: { PATH: '/usr/bin:/bin' }, inputs });
    const client = new RemoteClient({
      executor: parseRemoteEndpoint(`grpc://${cluster.address}`, '--remote_executor'),
      instanceName: '',
      timeoutMs: 10_000,
      retries: 3,
      identity,
    });
    try {
      const blobs = actionBlobs(key, inputs, root);
      await client.uploadMissing(blobs);
      const cas = cluster.server.context.instances.get('').cas;
      await cas.delete(inputs[0]!.digest);
      const reuploaded: Digest[][] = [];
      const outcome = await client.execute(key.digest, {
        skipCacheLookup: false,
        reupload: async (missing) => {
          reuploaded.push([...missing]);
          await client.uploadMissing(blobs, undefined, { recheck: true });
        },
      });
      expect(reuploaded).toEqual([[inputs[0]!.digest]]);
      expect(await cas.findMissing([inputs[0]!.digest])).toEqual([]);
      const result = outcome.response.result!;
      expect(result.exitCode).toBe(0);
      const reader = { read: (d: Digest) => client.read(d), readToFile: (d: Digest, file: FileHandle) => client.readToFile(d, file) };
      const files = await downloadOutputs(result, root, new Map(action.outputs.map((o) => [o.execPath, 'file'])), reader);
      expect(files.map((f) => f.path)).toEqual(['bazel-out/k8-fastbuild/bin/p/out.txt']);
      expect(await readFile(join(root, 'bazel-out/k8-fastbuild/bin/p/out.txt'), 'utf8')).toBe('lost\nlost\n');
      expect(outcome.operationName).not.toBe('');
      // The executor stored the result: the action cache answers now.
      expect((await client.getActionResult(key.digest))?.outputFiles).toHaveLength(1);
    } finally {
      client.close();
    }
  });
});

describe('--remote_cache_compression', () => {
  it('sends and fetches zstd blobs through batches and ByteStream, and the server stores the plain bytes', { timeout: 30_000 }, async () => {
    const cluster = await startClusterForTest();
    const endpoint = parseRemoteEndpoint(`grpc://${cluster.address}`, '--remote_cache');
    const client = new RemoteClient({ cache: endpoint, instanceName: '', timeoutMs: 10_000, retries: 0, identity, compression: true });
    try {
      const limits = (await client.capabilities()).limits;
      expect(limits).toMatchObject({ zstdStreams: true, zstdBatches: true });
      // Small (batch) and large (ByteStream, more than half a batch) blobs.
      const small = Buffer.from('small blob '.repeat(100));
      const large = Buffer.alloc(limits.maxBatchTotalSizeBytes, 'large blob ');
      const blobs = [small, large].map((data) => ({ digest: digestOf(data), data: async () => data }));
      await client.uploadMissing(blobs);
      const cas = cluster.server.context.instances.get('').cas;
      for (const b of blobs) expect((await cas.get(b.digest)).equals(await b.data())).toBe(true);
      for (const b of blobs) expect((await client.read(b.digest)).equals(await b.data())).toBe(true);
    } finally {
      client.close();
    }
  });
});

describe('parseRemoteEndpoint', () => {
  it.each([
    ['grpc://127.0.0.1:8980', '127.0.0.1:8980', false, { host: '127.0.0.1', port: 8980 }],
    ['grpcs://cache.example:443', 'cache.example:443', true, { host: 'cache.example', port: 443 }],
    ['grpcs://cache.example', 'cache.example:443', true, { host: 'cache.example', port: 443 }],
    ['cache.example:9092', 'cache.example:9092', true, { host: 'cache.example', port: 9092 }],
    ['grpc://[::1]:8980', '[::1]:8980', false, { host: '::1', port: 8980 }],
    ['unix:///run/kiln.sock', 'unix:///run/kiln.sock', false, { path: '/run/kiln.sock' }],
    ['unix:/run/kiln.sock', 'unix:///run/kiln.sock', false, { path: '/run/kiln.sock' }],
  ])('%s', (url, target, secure, address) => {
    expect(parseRemoteEndpoint(url, '--remote_cache')).toEqual({ url, target, secure, address });
  });

  it.each([
    ['http://x:1', /HTTP caches are not supported/],
    ['grpc://x', /needs a port/],
    ['grpc://x:99999', /out of range/],
    ['ftp://x:1', /unsupported scheme 'ftp'/],
    ['grpc://x:1/path', /expected host:port/],
  ])('rejects %s', (url, message) => {
    expect(() => parseRemoteEndpoint(url, '--remote_cache')).toThrow(message);
  });
});

describe('Retrier', () => {
  it('backs off exponentially with jitter, capped at the maximum', () => {
    const at = (random: number) =>
      new Retrier(
        undefined,
        async () => {},
        () => random,
      );
    expect([0, 1, 2, 3, 10].map((n) => at(0.5).delayMs(n))).toEqual([100, 200, 400, 800, 5000]);
    expect(at(0).delayMs(0)).toBeCloseTo(90);
    expect(at(1).delayMs(0)).toBeCloseTo(110);
    expect(at(0.5).delayMs(0, 2500)).toBe(2500);
  });
});
