import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestKey, reapi } from '../../src/core/index.js';
import { newToken, parseCacheServerConfig, parseStorageNodeConfig, startCacheServer, type CacheServer } from '../../scheduler/index.js';
import { blob, blobName, connect, grpc, must, randomBytes, readStream, uploadName, uploadRequests, writeStream, type Clients } from './cache-server-fixture.js';

const quiet = { info: () => undefined, warn: () => undefined };

/** A storage node (as `kiln storage` starts it) on a disk store in `dir`; `port` 0 the first time. */
async function startNode(dir: string, port = 0): Promise<CacheServer> {
  const config = parseStorageNodeConfig({ storage: { kind: 'disk', path: dir } }, 'node config', dir, { host: '127.0.0.1', port });
  return startCacheServer(config, { log: quiet });
}

/** A server whose CAS and action cache mirror the two nodes (as a scheduler configured so). */
async function startFront(a: string, b: string): Promise<CacheServer> {
  const node = (endpoint: string, keyspace: 'cas' | 'ac') => ({ kind: 'grpc', endpoint, keyspace, retries: 0, timeoutMs: 10_000 });
  const config = parseCacheServerConfig(
    {
      instances: {
        '': {
          cas: { kind: 'mirrored', a: node(a, 'cas'), b: node(b, 'cas') },
          actionCache: { kind: 'completeness-checking', backend: { kind: 'mirrored', a: node(a, 'ac'), b: node(b, 'ac') } },
        },
      },
    },
    'front config',
    process.cwd(),
    { host: '127.0.0.1', port: 0 },
  );
  return startCacheServer(config, { log: quiet });
}

const missingOn = async (clients: Clients, digests: reapi.DigestInit[]) =>
  (await must(clients.cas, clients.cas.FindMissingBlobs, { blobDigests: digests })).missingBlobDigests.map(digestKey).sort();

describe('storage nodes behind a mirrored CAS and action cache', () => {
  let dirA: string;
  let dirB: string;
  let nodeA: CacheServer;
  let nodeB: CacheServer;
  let front: CacheServer;
  let clients: Clients;
  const small = Array.from({ length: 12 }, (_, i) => blob(`small blob ${i}`));
  const large = blob(randomBytes(6 * 1024 * 1024, 7));
  const action = blob(reapi.Action.encode({ salt: Buffer.from('storage nodes') }));
  const all = [...small, large].map((b) => b.digest);

  beforeAll(async () => {
    dirA = await mkdtemp(join(tmpdir(), 'kiln-node-a-'));
    dirB = await mkdtemp(join(tmpdir(), 'kiln-node-b-'));
    nodeA = await startNode(dirA);
    nodeB = await startNode(dirB);
    front = await startFront(nodeA.endpoint, nodeB.endpoint);
    clients = connect(front.endpoint);
  });
  afterAll(async () => {
    clients.close();
    await front.close();
    await nodeA.close();
    await nodeB.close();
    await rm(dirA, { recursive: true, force: true });
    await rm(dirB, { recursive: true, force: true });
  });

  it('stores every blob and action result on both nodes, large ones streamed through', async () => {
    await must(clients.cas, clients.cas.BatchUpdateBlobs, { requests: small.map((b) => ({ digest: b.digest, data: b.data })) });
    expect(await writeStream(clients.bs, uploadRequests(uploadName(large.digest), large.data, 512 * 1024))).toMatchObject({ ok: true });
    await must(clients.ac, clients.ac.UpdateActionResult, {
      actionDigest: action.digest,
      actionResult: { outputFiles: [{ path: 'big', digest: large.digest }], stdoutDigest: small[0]!.digest },
    });
    for (const node of [nodeA, nodeB]) {
      const direct = connect(node.endpoint);
      try {
        expect(await missingOn(direct, all)).toEqual([]);
        expect((await must(direct.ac, direct.ac.GetActionResult, { actionDigest: action.digest })).outputFiles[0]!.path).toBe('big');
      } finally {
        direct.close();
      }
    }
    const read = await readStream(clients.bs, { resourceName: blobName(large.digest) });
    expect(read.ok && read.value.equals(large.data)).toBe(true);
    // A ranged read (a resumed download) gets exactly its bytes.
    const tail = await readStream(clients.bs, { resourceName: blobName(large.digest), readOffset: 5_000_000, readLimit: 100_000 });
    expect(tail.ok && tail.value.equals(large.data.subarray(5_000_000, 5_100_000))).toBe(true);
  });

  it('loses nothing when a node is stopped and restarted on its disk store', async () => {
    const port = nodeA.port;
    await nodeA.close();
    nodeA = await startNode(dirA, port);
    const direct = connect(nodeA.endpoint);
    try {
      expect(await missingOn(direct, all)).toEqual([]);
    } finally {
      direct.close();
    }
    for (let i = 0; i < 2; i++) {
      expect(await missingOn(clients, all)).toEqual([]);
      const batch = await must(clients.cas, clients.cas.BatchReadBlobs, { digests: small.map((b) => b.digest) });
      expect(batch.responses.map((r) => r.data.toString())).toEqual(small.map((b) => b.data.toString()));
      const read = await readStream(clients.bs, { resourceName: blobName(large.digest) });
      expect(read.ok && read.value.equals(large.data)).toBe(true);
      expect((await must(clients.ac, clients.ac.GetActionResult, { actionDigest: action.digest })).outputFiles[0]!.path).toBe('big');
    }
  });

  it('finds a blob written while one node is down, and copies it to that node when it is back', async () => {
    const port = nodeB.port;
    await nodeB.close();
    const late = blob('written while node b was down');
    const result = await must(clients.cas, clients.cas.BatchUpdateBlobs, { requests: [{ digest: late.digest, data: late.data }] });
    expect(result.responses[0]!.status?.code).toBe(grpc.status.OK);
    expect(await missingOn(clients, [late.digest])).toEqual([]);
    for (let i = 0; i < 2; i++) {
      const read = await must(clients.cas, clients.cas.BatchReadBlobs, { digests: [late.digest] });
      expect(read.responses[0]!.data.toString()).toBe(late.data.toString());
    }
    nodeB = await startNode(dirB, port);
    const direct = connect(nodeB.endpoint);
    try {
      expect(await missingOn(direct, [late.digest])).toEqual([digestKey(late.digest)]);
      expect(await missingOn(clients, [late.digest])).toEqual([]);
      expect(await missingOn(direct, [late.digest])).toEqual([]);
    } finally {
      direct.close();
    }
  });

  it('repairs a corrupt copy on one node from the other', async () => {
    const victim = small[5]!;
    const file = (dir: string, hash: string) => join(dir, 'cas', hash.slice(0, 2), hash);
    const bytes = await readFile(file(dirA, victim.digest.hash));
    bytes[0] = bytes[0]! ^ 0xff;
    await writeFile(file(dirA, victim.digest.hash), bytes);
    const bigBytes = await readFile(file(dirA, large.digest.hash));
    bigBytes[bigBytes.length - 1] = bigBytes[bigBytes.length - 1]! ^ 0x01;
    await writeFile(file(dirA, large.digest.hash), bigBytes);
    // Reads alternate between the nodes: two in a row are sure to try A first once.
    for (let i = 0; i < 2; i++) {
      const read = await must(clients.cas, clients.cas.BatchReadBlobs, { digests: [victim.digest] });
      expect(read.responses[0]!.data.toString()).toBe(victim.data.toString());
    }
    for (let i = 0; i < 2; i++) {
      const big = await readStream(clients.bs, { resourceName: blobName(large.digest) });
      expect(big.ok && big.value.equals(large.data)).toBe(true);
    }
    expect((await readFile(file(dirA, victim.digest.hash))).equals(victim.data)).toBe(true);
    expect((await readFile(file(dirA, large.digest.hash))).equals(large.data)).toBe(true);
  });
});

describe('storage nodes behind a sharded, mirrored CAS', () => {
  it('keeps each blob on the two nodes of the pair its digest picks, and passes the nodes’ codes on', async () => {
    const nodes = await Promise.all(
      [0, 1, 2, 3].map(() =>
        startCacheServer(parseStorageNodeConfig({ storage: { kind: 'memory' } }, 'node config', process.cwd(), { host: '127.0.0.1', port: 0 }), {
          log: quiet,
        }),
      ),
    );
    const grpcNode = (i: number) => ({ kind: 'grpc', endpoint: nodes[i]!.endpoint, retries: 0 });
    const pair = (i: number) => ({ kind: 'mirrored', a: grpcNode(i), b: grpcNode(i + 1) });
    const config = parseCacheServerConfig(
      {
        instances: {
          '': {
            cas: {
              kind: 'sharding',
              shards: [
                { name: 'pair-1', backend: pair(0) },
                { name: 'pair-2', weight: 1, backend: pair(2) },
              ],
            },
            actionCache: { kind: 'memory', maxBytes: 1 << 20 },
          },
        },
      },
      'front config',
      process.cwd(),
      { host: '127.0.0.1', port: 0 },
    );
    const front = await startCacheServer(config, { log: quiet });
    const clients = connect(front.endpoint);
    const direct = nodes.map((n) => connect(n.endpoint));
    try {
      const blobs = Array.from({ length: 40 }, (_, i) => blob(`sharded blob ${i}`));
      await must(clients.cas, clients.cas.BatchUpdateBlobs, { requests: blobs.map((b) => ({ digest: b.digest, data: b.data })) });
      const holders = await Promise.all(
        blobs.map(async (b) => {
          const held = await Promise.all(direct.map(async (d) => (await missingOn(d, [b.digest])).length === 0));
          return held.map((h, i) => (h ? String(i) : '')).join('');
        }),
      );
      expect(new Set(holders)).toEqual(new Set(['01', '23']));
      expect(
        await missingOn(
          clients,
          blobs.map((b) => b.digest),
        ),
      ).toEqual([]);

      const absent = blob('stored nowhere');
      const notFound = await readStream(clients.bs, { resourceName: blobName(absent.digest) });
      expect(notFound).toMatchObject({ ok: false, code: grpc.status.NOT_FOUND });
      const big = blob(randomBytes(5 * 1024 * 1024, 9));
      expect(await writeStream(clients.bs, uploadRequests(uploadName(big.digest), big.data, 1024 * 1024))).toMatchObject({ ok: true });
      const beyond = await readStream(clients.bs, { resourceName: blobName(big.digest), readOffset: big.data.length + 1 });
      expect(beyond).toMatchObject({ ok: false, code: grpc.status.OUT_OF_RANGE });
    } finally {
      clients.close();
      for (const d of direct) d.close();
      await front.close();
      await Promise.all(nodes.map((n) => n.close()));
    }
  });
});

describe('a storage node with auth on', () => {
  it('serves a front that sends its token, and a front without one gets INTERNAL, not the node’s UNAUTHENTICATED', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kiln-node-auth-'));
    const front = newToken('front');
    await writeFile(join(dir, 'tokens.txt'), `${front.line}\n`);
    await writeFile(join(dir, 'front-token'), `${front.token}\n`);
    const node = await startCacheServer(
      parseStorageNodeConfig(
        { storage: { kind: 'memory' }, auth: { tokenFile: 'tokens.txt', roles: { 'token:front': { '*': 'cache-writer' } } } },
        'node config',
        dir,
        { host: '127.0.0.1', port: 0 },
      ),
      { log: quiet },
    );
    const frontWith = async (grpcNode: Record<string, unknown>) =>
      startCacheServer(
        parseCacheServerConfig({ instances: { '': { cas: grpcNode, actionCache: { kind: 'memory', maxBytes: 1 << 20 } } } }, 'front config', dir, {
          host: '127.0.0.1',
          port: 0,
        }),
        { log: quiet },
      );
    const trusted = await frontWith({ kind: 'grpc', endpoint: node.endpoint, tokenFile: 'front-token', retries: 0 });
    const stranger = await frontWith({ kind: 'grpc', endpoint: node.endpoint, retries: 0 });
    const [a, b] = [connect(trusted.endpoint), connect(stranger.endpoint)];
    try {
      const x = blob('behind auth');
      const stored = await must(a.cas, a.cas.BatchUpdateBlobs, { requests: [{ digest: x.digest, data: x.data }] });
      expect(stored.responses[0]!.status?.code).toBe(grpc.status.OK);
      expect(await missingOn(a, [x.digest])).toEqual([]);
      const refused = await new Promise<grpc.ServiceError | null>((resolve) => b.cas.FindMissingBlobs({ blobDigests: [x.digest] }, (err) => resolve(err)));
      expect(refused?.code).toBe(grpc.status.INTERNAL);
      expect(refused?.details).toMatch(/refused this server's credentials/);

      // The node's token rotated: the node takes the new one (its token file reloads), and the front
      // sends it from its own token file, read again when it changes, without a restart of either.
      const rotated = newToken('front');
      await writeFile(join(dir, 'tokens.txt'), `${rotated.line}\n`);
      expect(await node.security.reloadTokens()).toBe(true);
      const y = blob('after the rotation');
      const old = await new Promise<grpc.ServiceError | null>((resolve) => a.cas.FindMissingBlobs({ blobDigests: [y.digest] }, (err) => resolve(err)));
      expect(old?.code).toBe(grpc.status.INTERNAL); // the front still sends the old token
      await writeFile(join(dir, 'front-token'), `${rotated.token}\n`);
      expect(await missingOn(a, [y.digest])).toEqual([digestKey(y.digest)]);
    } finally {
      a.close();
      b.close();
      await trusted.close();
      await stranger.close();
      await node.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
