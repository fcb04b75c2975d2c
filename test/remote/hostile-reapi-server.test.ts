import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { bytestream, digestKey, digestOf, googleRpc, reapi, unpackAny } from '../../src/core/index.js';
import { startHostileReapiServer, zeros, type HostileReapiServer } from './hostile-reapi-server.js';

// The hostile server's defaults must be a correct server, or tests built on it prove nothing.
let server: HostileReapiServer | undefined;
const clients: grpc.Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server?.close();
  server = undefined;
});

function client<T>(definition: object, name: string): T {
  const Ctor = grpc.makeGenericClientConstructor(definition as grpc.ServiceDefinition, name);
  const c = new Ctor(server!.url.slice('grpc://'.length), grpc.credentials.createInsecure());
  clients.push(c);
  return c as unknown as T;
}

function readAll(bs: bytestream.ByteStreamClient, resourceName: string, readOffset = 0): Promise<{ data: Buffer; error?: grpc.ServiceError }> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    const call = bs.Read({ resourceName, readOffset }, new grpc.Metadata(), { deadline: Date.now() + 5000 });
    call.on('data', (r: bytestream.ReadResponse) => parts.push(Buffer.from(r.data)));
    call.on('error', (error: grpc.ServiceError) => resolve({ data: Buffer.concat(parts), error }));
    call.on('end', () => resolve({ data: Buffer.concat(parts) }));
  });
}

describe('hostile REAPI test server', () => {
  it('by default stores and serves blobs over batches and ByteStream, and executes from its action results', async () => {
    server = await startHostileReapiServer();
    const cas = client<reapi.ContentAddressableStorageClient>(reapi.ContentAddressableStorageService, 'CAS');
    const bs = client<bytestream.ByteStreamClient>(bytestream.ByteStreamService, 'ByteStream');
    const exec = client<reapi.ExecutionClient>(reapi.ExecutionService, 'Execution');
    const data = Buffer.from('hello hostile world');
    const digest = digestOf(data);

    const missing = await new Promise<reapi.FindMissingBlobsResponse>((resolve, reject) =>
      cas.FindMissingBlobs({ instanceName: '', blobDigests: [digest] }, (e: grpc.ServiceError | null, r?: reapi.FindMissingBlobsResponse) =>
        e ? reject(e) : resolve(r!),
      ),
    );
    expect(missing.missingBlobDigests.map((d) => d.hash)).toEqual([digest.hash]);

    const written = await new Promise<bytestream.WriteResponse>((resolve, reject) => {
      const call = bs.Write((e: grpc.ServiceError | null, r?: bytestream.WriteResponse) => (e ? reject(e) : resolve(r!)));
      call.write({ resourceName: `uploads/u1/blobs/${digestKey(digest)}`, writeOffset: 0, finishWrite: true, data });
      call.end();
    });
    expect(written.committedSize).toBe(data.length);
    expect(server.cas.get(digestKey(digest))).toEqual(data);
    expect((await readAll(bs, `blobs/${digestKey(digest)}`, 6)).data.toString()).toBe('hostile world');

    server.executeResults.set(digestKey(digest), { exitCode: 3 });
    const ops: { done: boolean; exitCode?: number }[] = await new Promise((resolve, reject) => {
      const seen: { done: boolean; exitCode?: number }[] = [];
      const call = exec.Execute({ instanceName: '', actionDigest: digest });
      call.on('data', (op: { done: boolean; response?: { typeUrl: string; value: Uint8Array } }) =>
        seen.push({ done: op.done, ...(op.response ? { exitCode: unpackAny(reapi.ExecuteResponse, op.response)!.result!.exitCode } : {}) }),
      );
      call.on('error', reject);
      call.on('end', () => resolve(seen));
    });
    expect(ops).toEqual([{ done: false }, { done: true, exitCode: 3 }]);
  });

  it('follows a script: a status with RetryInfo, a stream cut after N bytes, then the default', async () => {
    server = await startHostileReapiServer();
    const blob = server.put(Buffer.alloc(200_000, 7));
    server.script('Read', [
      { kind: 'fail', code: grpc.status.RESOURCE_EXHAUSTED, retryDelayMs: 3_600_000 },
      { kind: 'partial', bytes: 1000, then: { code: grpc.status.UNAVAILABLE } },
    ]);
    const bs = client<bytestream.ByteStreamClient>(bytestream.ByteStreamService, 'ByteStream');
    const name = `blobs/${digestKey(blob)}`;

    const first = await readAll(bs, name);
    expect(first.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    const details = googleRpc.Status.decode(first.error!.metadata.get('grpc-status-details-bin')[0] as Buffer);
    expect(unpackAny(googleRpc.RetryInfo, details.details[0]!)?.retryDelay?.seconds).toBe(3600);

    const second = await readAll(bs, name);
    expect(second.data.length).toBe(1000);
    expect(second.error?.code).toBe(grpc.status.UNAVAILABLE);

    expect((await readAll(bs, name, 1000)).data.length).toBe(199_000);
    expect(server.requests.Read.map((r) => (r as bytestream.ReadRequest).readOffset)).toEqual([0, 0, 1000]);
  });

  it('generates a claimed-huge stream lazily, and close() ends a stalled call', async () => {
    server = await startHostileReapiServer();
    server.script('Read', [{ kind: 'stream', chunks: zeros(3 * 1024 * 1024), then: 'stall' }]);
    server.script('GetCapabilities', () => ({ kind: 'stall' }));
    const bs = client<bytestream.ByteStreamClient>(bytestream.ByteStreamService, 'ByteStream');
    const caps = client<reapi.CapabilitiesClient>(reapi.CapabilitiesService, 'Capabilities');
    const received = await new Promise<number>((resolve) => {
      let n = 0;
      const call = bs.Read({ resourceName: 'blobs/x/1', readOffset: 0 });
      call.on('data', (r: bytestream.ReadResponse) => {
        n += r.data.length;
        if (n === 3 * 1024 * 1024) {
          call.cancel();
          resolve(n);
        }
      });
      call.on('error', () => undefined);
    });
    expect(received).toBe(3 * 1024 * 1024);
    const stalled = new Promise<grpc.ServiceError | null>((resolve) => caps.GetCapabilities({ instanceName: '' }, (e: grpc.ServiceError | null) => resolve(e)));
    await server.called('GetCapabilities');
    await server.close();
    server = undefined;
    // The server's shutdown cancels the call it never answered.
    expect([grpc.status.CANCELLED, grpc.status.UNAVAILABLE]).toContain((await stalled)?.code);
  });
});
