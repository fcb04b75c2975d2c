import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytestream, googleRpc, grpcStatusOf, NotFoundError, reapi } from '../../../src/core/index.js';

// The generated service definitions, served and called by @grpc/grpc-js on loopback.
const capabilities: reapi.CapabilitiesServer = {
  GetCapabilities(call, callback) {
    callback(null, {
      cacheCapabilities: { digestFunctions: [reapi.DigestFunction_Value.SHA256], maxBatchTotalSizeBytes: 4 << 20 },
      lowApiVersion: { major: 2 },
      highApiVersion: { major: 2, minor: 3 },
      deprecatedApiVersion: call.request.instanceName === 'old' ? { major: 1 } : null,
    });
  },
};

const byteStream: bytestream.ByteStreamServer = {
  Read(call) {
    if (call.request.resourceName === 'missing') {
      const status = grpcStatusOf(new NotFoundError('blob missing not found'));
      call.emit('error', { code: status.code, details: status.message });
      return;
    }
    for (let i = 0; i < 3; i++) call.write({ data: Buffer.alloc(1000, String(i)) });
    call.end();
  },
  Write(call, callback) {
    let total = 0;
    call.on('data', (req: bytestream.WriteRequest) => {
      total += req.data.length;
    });
    call.on('end', () => callback(null, { committedSize: total }));
  },
  QueryWriteStatus(call, callback) {
    callback(null, { committedSize: 2 ** 40, complete: call.request.resourceName.endsWith('done') });
  },
};

let server: grpc.Server;
let address: string;

beforeAll(async () => {
  server = new grpc.Server();
  server.addService(reapi.CapabilitiesService, capabilities);
  server.addService(bytestream.ByteStreamService, byteStream);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  address = `127.0.0.1:${port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
});

function client<C>(definition: grpc.ServiceDefinition, name: string): C {
  const Ctor = grpc.makeGenericClientConstructor(definition, name);
  return new Ctor(address, grpc.credentials.createInsecure()) as unknown as C;
}

describe('generated gRPC service definitions', () => {
  it('serve a unary call with typed requests and responses', async () => {
    const c = client<reapi.CapabilitiesClient>(reapi.CapabilitiesService, 'Capabilities');
    const caps = await new Promise<reapi.ServerCapabilities>((resolve, reject) =>
      c.GetCapabilities({ instanceName: 'old' }, (err, res) => (err ? reject(err) : resolve(res!))),
    );
    expect(caps.cacheCapabilities?.maxBatchTotalSizeBytes).toBe(4 << 20);
    expect(caps.highApiVersion).toMatchObject({ major: 2, minor: 3 });
    expect(caps.deprecatedApiVersion?.major).toBe(1);
    c.close();
  });

  it('serve server streaming, client streaming, and errors with their status code', async () => {
    const c = client<bytestream.ByteStreamClient>(bytestream.ByteStreamService, 'ByteStream');
    const chunks: Buffer[] = [];
    for await (const res of c.Read({ resourceName: 'blobs/x/3000' })) chunks.push((res as bytestream.ReadResponse).data);
    expect(Buffer.concat(chunks).length).toBe(3000);

    const written = await new Promise<bytestream.WriteResponse>((resolve, reject) => {
      const call = c.Write((err, res) => (err ? reject(err) : resolve(res!)));
      call.write({ resourceName: 'uploads/u/blobs/x/10', writeOffset: 0, data: Buffer.alloc(4) });
      call.write({ writeOffset: 4, data: Buffer.alloc(6), finishWrite: true });
      call.end();
    });
    expect(written.committedSize).toBe(10);

    const status = await new Promise<bytestream.QueryWriteStatusResponse>((resolve, reject) =>
      c.QueryWriteStatus({ resourceName: 'uploads/u/done' }, (err, res) => (err ? reject(err) : resolve(res!))),
    );
    expect(status).toMatchObject({ committedSize: 2 ** 40, complete: true });

    const error = await new Promise<grpc.ServiceError>((resolve) => {
      const call = c.Read({ resourceName: 'missing' });
      call.on('data', () => undefined);
      call.on('error', resolve);
    });
    expect(error.code).toBe(googleRpc.Code.NOT_FOUND);
    expect(error.details).toBe('blob missing not found');
    c.close();
  });
});
