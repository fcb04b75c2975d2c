import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parseCacheServerConfig, parseStorageNodeConfig, startCacheServer } from '../../../scheduler/index.js';
import { blob, connect, grpc, must } from '../cache-server-fixture.js';
import { issueCertificate, makeCa, opensslAvailable } from './test-certificates.js';

const haveOpenssl = opensslAvailable();
const quiet = { info: () => undefined, warn: () => undefined };

describe.skipIf(!haveOpenssl)('a scheduler reaching a storage node over mutual TLS', () => {
  it('stores and reads through grpcs:// with its client certificate (cn:front has cache-writer on the node)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kiln-node-tls-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const ca = await makeCa(dir, 'storage');
    await issueCertificate(ca, dir, 'node', 'kiln-storage');
    await issueCertificate(ca, dir, 'front', 'front');
    const node = await startCacheServer(
      parseStorageNodeConfig(
        {
          storage: { kind: 'memory' },
          tls: { certificate: 'node.pem', key: 'node.key', clientCa: 'storage-ca.pem', requireClientCertificate: true },
          auth: { roles: { 'cn:front': { '*': 'cache-writer' } } },
        },
        'node config',
        dir,
        { host: '127.0.0.1', port: 0 },
      ),
      { log: quiet },
    );
    onTestFinished(() => node.close());
    expect(node.endpoint).toMatch(/^grpcs:/);
    const cas = { kind: 'grpc', endpoint: node.endpoint, tls: { ca: 'storage-ca.pem', certificate: 'front.pem', key: 'front.key' }, retries: 0 };
    const front = await startCacheServer(
      parseCacheServerConfig({ instances: { '': { cas, actionCache: { kind: 'memory', maxBytes: 1 << 20 } } } }, 'front config', dir, {
        host: '127.0.0.1',
        port: 0,
      }),
      { log: quiet },
    );
    onTestFinished(() => front.close());
    const clients = connect(front.endpoint);
    onTestFinished(() => clients.close());
    const x = blob('over mutual TLS');
    const stored = await must(clients.cas, clients.cas.BatchUpdateBlobs, { requests: [{ digest: x.digest, data: x.data }] });
    expect(stored.responses[0]!.status?.code).toBe(grpc.status.OK);
    const read = await must(clients.cas, clients.cas.BatchReadBlobs, { digests: [x.digest] });
    expect(read.responses[0]!.data.toString()).toBe('over mutual TLS');
  });
});
