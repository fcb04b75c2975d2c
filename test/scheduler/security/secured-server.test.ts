import * as grpc from '@grpc/grpc-js';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestOf, reapi } from '../../../src/core/index.js';
import { parseCacheServerConfig, startCacheServer, type CacheServer } from '../../../scheduler/index.js';
import { tokenSha256 } from '../../../scheduler/security/token-file.js';
import { blob, connect as connectTo, type Clients } from '../cache-server-fixture.js';
import { issueCertificate, makeCa, opensslAvailable, type CertificateFiles } from './test-certificates.js';

const haveOpenssl = opensslAvailable();
const TOKENS = { reader: 'reader-token-1', writer: 'writer-token-2', runner: 'exec-token-3', admin: 'admin-token-4' };

function connect(server: CacheServer, credentials: grpc.ChannelCredentials): Clients {
  return connectTo(server.endpoint, credentials);
}

type Outcome = { ok: true; value: unknown } | { ok: false; code: grpc.status; message: string };

/** A unary call with `authorization: Bearer token` (none when token is undefined); never rejects. */
function callAs(token: string | undefined, client: grpc.Client, method: unknown, request: unknown): Promise<Outcome> {
  const metadata = new grpc.Metadata();
  if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
  return new Promise((resolve) => {
    (method as (r: unknown, m: grpc.Metadata, o: grpc.CallOptions, cb: grpc.requestCallback<unknown>) => unknown).call(
      client,
      request,
      metadata,
      { deadline: Date.now() + 10_000 },
      (err, value) => resolve(err ? { ok: false, code: err.code, message: err.details } : { ok: true, value }),
    );
  });
}

const codeOf = (o: Outcome) => (o.ok ? grpc.status.OK : o.code);
const log = { info: () => undefined, warn: () => undefined };

async function startSecured(dir: string, tls: Record<string, unknown>, auth?: Record<string, unknown>): Promise<CacheServer> {
  const config = parseCacheServerConfig({ instanceNames: ['', 'ci'], tls, ...(auth ? { auth } : {}) }, 'test config', dir, { host: '127.0.0.1', port: 0 });
  return startCacheServer(config, { log });
}

/** Polls `check` until it holds or `ms` pass: for a file change the server picks up by itself. */
async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe.skipIf(!haveOpenssl)('a secured cache server', () => {
  let dir: string;
  let ca: { ca: string; caKey: string };
  let ciClient: CertificateFiles;
  let server: CacheServer;
  let tokenFile: string;
  let trusting: grpc.ChannelCredentials;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-secured-'));
    ca = await makeCa(dir, 'cluster');
    await issueCertificate(ca, dir, 'server', 'kiln-scheduler');
    ciClient = await issueCertificate(ca, dir, 'ci-client', 'ci-runner', 'DNS:ci.example.com');
    tokenFile = join(dir, 'tokens.txt');
    const lines = Object.entries(TOKENS).map(([name, token]) => `${tokenSha256(token).toString('hex')} ${name}`);
    await writeFile(tokenFile, `# test tokens\n${lines.join('\n')}\n`);
    server = await startSecured(
      dir,
      { certificate: 'server.pem', key: 'server.key', clientCa: 'cluster-ca.pem' },
      {
        tokenFile: 'tokens.txt',
        roles: {
          'token:reader': { '*': 'cache-reader' },
          'token:writer': { ci: 'cache-writer' },
          'token:runner': { '*': 'executor-client' },
          'token:admin': { '*': 'admin' },
          'cn:ci-runner': { '': 'cache-writer' },
        },
      },
    );
    trusting = grpc.credentials.createSsl(await readFile(ca.ca));
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves TLS on grpcs:// to a client trusting its CA, and refuses the handshake of one that does not', async () => {
    expect(server.endpoint).toBe(`grpcs://127.0.0.1:${server.port}`);
    const good = connect(server, trusting);
    expect(codeOf(await callAs(TOKENS.reader, good.caps, good.caps.GetCapabilities, { instanceName: '' }))).toBe(grpc.status.OK);
    good.close();
    const other = await makeCa(join(dir, 'other'), 'other');
    const bad = connect(server, grpc.credentials.createSsl(await readFile(other.ca)));
    expect(codeOf(await callAs(TOKENS.reader, bad.caps, bad.caps.GetCapabilities, { instanceName: '' }))).toBe(grpc.status.UNAVAILABLE);
    bad.close();
  });

  it('answers UNAUTHENTICATED without credentials or with a token that is not in the file; GetCapabilities answers anyone', async () => {
    const c = connect(server, trusting);
    for (const token of [undefined, 'not-a-token']) {
      const outcome = await callAs(token, c.cas, c.cas.FindMissingBlobs, { instanceName: '', blobDigests: [] });
      expect(codeOf(outcome)).toBe(grpc.status.UNAUTHENTICATED);
      // Bazel 2.1.0 sends no --remote_header with it, and it says nothing of what is stored (rpc-permissions.ts).
      expect(codeOf(await callAs(token, c.caps, c.caps.GetCapabilities, { instanceName: '' }))).toBe(grpc.status.OK);
    }
    const unauthenticatedWrite = await callAs(undefined, c.cas, c.cas.BatchUpdateBlobs, { instanceName: '', requests: [blob('x')] });
    expect(codeOf(unauthenticatedWrite)).toBe(grpc.status.UNAUTHENTICATED);
    c.close();
  });

  it('allows each role its RPCs, per instance, and refuses the rest with PERMISSION_DENIED alike for unknown instances', async () => {
    const c = connect(server, trusting);
    const b = blob('a blob the writer stores');
    const upload = (token: string, instanceName: string) =>
      callAs(token, c.cas, c.cas.BatchUpdateBlobs, { instanceName, requests: [{ digest: b.digest, data: b.data }] });
    const findMissing = (token: string, instanceName: string) => callAs(token, c.cas, c.cas.FindMissingBlobs, { instanceName, blobDigests: [b.digest] });

    expect(codeOf(await findMissing(TOKENS.reader, 'ci'))).toBe(grpc.status.OK);
    expect(codeOf(await upload(TOKENS.reader, 'ci'))).toBe(grpc.status.PERMISSION_DENIED);
    expect(codeOf(await upload(TOKENS.writer, 'ci'))).toBe(grpc.status.OK);
    // The writer's role is for "ci" only.
    expect(codeOf(await upload(TOKENS.writer, ''))).toBe(grpc.status.PERMISSION_DENIED);
    expect(codeOf(await findMissing(TOKENS.writer, ''))).toBe(grpc.status.PERMISSION_DENIED);
    expect(codeOf(await upload(TOKENS.runner, ''))).toBe(grpc.status.OK);

    // An instance that does not exist reads exactly like one the caller may not use.
    const denied = await findMissing(TOKENS.writer, 'secret-project');
    const deniedExisting = await findMissing(TOKENS.writer, '');
    expect(denied).toMatchObject({ ok: false, code: grpc.status.PERMISSION_DENIED });
    expect(denied.ok ? '' : denied.message.replace('"secret-project"', '""')).toBe(deniedExisting.ok ? 'ok' : deniedExisting.message);
    // A caller allowed everywhere learns the name is wrong from the handler, as without auth.
    expect(codeOf(await findMissing(TOKENS.admin, 'secret-project'))).toBe(grpc.status.INVALID_ARGUMENT);

    // ByteStream: the instance comes from the resource name.
    const read = (token: string, instance: string) =>
      new Promise<grpc.status>((resolve) => {
        const metadata = new grpc.Metadata();
        metadata.set('authorization', `Bearer ${token}`);
        const prefix = instance === '' ? '' : `${instance}/`;
        const stream = c.bs.Read({ resourceName: `${prefix}blobs/${b.digest.hash}/${b.digest.sizeBytes}` }, metadata);
        stream.on('data', () => undefined);
        stream.on('error', (e: grpc.ServiceError) => resolve(e.code));
        stream.on('end', () => resolve(grpc.status.OK));
      });
    expect(await read(TOKENS.reader, 'ci')).toBe(grpc.status.OK);
    expect(await read(TOKENS.writer, '')).toBe(grpc.status.PERMISSION_DENIED);
    c.close();
  });

  it('keeps a cache-reader (and an executor-client) from poisoning the action cache', async () => {
    const c = connect(server, trusting);
    const out = blob('poisoned output');
    await callAs(TOKENS.admin, c.cas, c.cas.BatchUpdateBlobs, { instanceName: '', requests: [{ digest: out.digest, data: out.data }] });
    const actionDigest = digestOf(reapi.Action.encode({ commandDigest: blob('poison target').digest }));
    const update = (token: string) =>
      callAs(token, c.ac, c.ac.UpdateActionResult, {
        instanceName: '',
        actionDigest,
        actionResult: { outputFiles: [{ path: 'out', digest: out.digest }], exitCode: 0 },
      });
    expect(codeOf(await update(TOKENS.reader))).toBe(grpc.status.PERMISSION_DENIED);
    expect(codeOf(await update(TOKENS.runner))).toBe(grpc.status.PERMISSION_DENIED);
    // Another client asking afterwards finds nothing.
    expect(codeOf(await callAs(TOKENS.admin, c.ac, c.ac.GetActionResult, { instanceName: '', actionDigest }))).toBe(grpc.status.NOT_FOUND);
    c.close();
  });

  it('takes a verified client certificate as the identity cn:/dns: of its names', async () => {
    const withCertificate = grpc.credentials.createSsl(await readFile(ca.ca), await readFile(ciClient.key), await readFile(ciClient.certificate));
    const c = connect(server, withCertificate);
    const b = blob('written by the CI certificate');
    const upload = (instanceName: string) => callAs(undefined, c.cas, c.cas.BatchUpdateBlobs, { instanceName, requests: [{ digest: b.digest, data: b.data }] });
    expect(codeOf(await upload(''))).toBe(grpc.status.OK);
    expect(codeOf(await upload('ci'))).toBe(grpc.status.PERMISSION_DENIED);
    c.close();
  });

  it('accepts a token added to the token file without a restart, and drops a removed one', async () => {
    const c = connect(server, trusting);
    const caps = (token: string) => callAs(token, c.cas, c.cas.FindMissingBlobs, { instanceName: '', blobDigests: [] });
    const original = await readFile(tokenFile, 'utf8');
    const withoutReader = original
      .split('\n')
      .filter((l) => !l.endsWith(' reader'))
      .join('\n');
    // Written beside it and renamed into place, as a deployment rotates secrets.
    await writeFile(`${tokenFile}.new`, `${withoutReader}${tokenSha256('new-token').toString('hex')} reader\n`);
    await rename(`${tokenFile}.new`, tokenFile);
    expect(await eventually(async () => codeOf(await caps('new-token')) === grpc.status.OK)).toBe(true);
    expect(codeOf(await caps(TOKENS.reader))).toBe(grpc.status.UNAUTHENTICATED);
    c.close();
  });
});

describe.skipIf(!haveOpenssl)('mutual TLS and certificate reloads', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-mtls-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('with requireClientCertificate, refuses the handshake of a client without a certificate of its CA', async () => {
    const ca = await makeCa(dir, 'm');
    await issueCertificate(ca, dir, 'server', 'kiln-scheduler');
    const client = await issueCertificate(ca, dir, 'client', 'someone');
    const server = await startSecured(dir, { certificate: 'server.pem', key: 'server.key', clientCa: 'm-ca.pem', requireClientCertificate: true });
    try {
      const caPem = await readFile(ca.ca);
      const without = connect(server, grpc.credentials.createSsl(caPem));
      expect(codeOf(await callAs(undefined, without.caps, without.caps.GetCapabilities, {}))).toBe(grpc.status.UNAVAILABLE);
      without.close();
      const stranger = await issueCertificate(await makeCa(join(dir, 's'), 's'), join(dir, 's'), 'stranger', 'someone');
      const wrongCa = connect(server, grpc.credentials.createSsl(caPem, await readFile(stranger.key), await readFile(stranger.certificate)));
      expect(codeOf(await callAs(undefined, wrongCa.caps, wrongCa.caps.GetCapabilities, {}))).toBe(grpc.status.UNAVAILABLE);
      wrongCa.close();
      const withCert = connect(server, grpc.credentials.createSsl(caPem, await readFile(client.key), await readFile(client.certificate)));
      // Auth is off here: a valid certificate is all it takes.
      expect(codeOf(await callAs(undefined, withCert.caps, withCert.caps.GetCapabilities, {}))).toBe(grpc.status.OK);
      withCert.close();
    } finally {
      await server.close();
    }
  });

  it('serves a replaced certificate to new connections without a restart, and keeps the old one when the new files are broken', async () => {
    const first = await makeCa(join(dir, 'r1'), 'first');
    const second = await makeCa(join(dir, 'r2'), 'second');
    const live = join(dir, 'live');
    const files = await issueCertificate(first, live, 'server', 'kiln-scheduler');
    const warnings: string[] = [];
    const config = parseCacheServerConfig({ tls: { certificate: files.certificate, key: files.key } }, 'test config', dir, { host: '127.0.0.1', port: 0 });
    const server = await startCacheServer(config, { log: { info: () => undefined, warn: (m) => warnings.push(m) } });
    const answersWith = async (caFile: string) => {
      const c = connect(server, grpc.credentials.createSsl(await readFile(caFile)));
      const code = codeOf(await callAs(undefined, c.caps, c.caps.GetCapabilities, {}));
      c.close();
      return code === grpc.status.OK;
    };
    try {
      expect(await answersWith(first.ca)).toBe(true);
      expect(await answersWith(second.ca)).toBe(false);

      // A key that does not match the certificate: refused, the old pair stays.
      const next = await issueCertificate(second, join(dir, 'r2'), 'server', 'kiln-scheduler');
      await writeFile(files.certificate, await readFile(next.certificate));
      expect(await server.security.reloadTls()).toBe(false);
      expect(warnings.join('\n')).toMatch(/not reloaded.*key pair/);
      expect(await answersWith(first.ca)).toBe(true);

      // The matching key arrives: the watcher picks the pair up by itself.
      await writeFile(files.key, await readFile(next.key));
      expect(await eventually(() => answersWith(second.ca))).toBe(true);
      expect(await answersWith(first.ca)).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe.skipIf(!haveOpenssl)('a secured port that grants "anonymous" a role', () => {
  it('lets a caller without credentials do what that role allows, refuses the rest, and still refuses a bad token', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kiln-anonymous-'));
    const ca = await makeCa(dir, 'cluster');
    await issueCertificate(ca, dir, 'server', 'kiln-scheduler');
    await writeFile(join(dir, 'tokens.txt'), `${tokenSha256(TOKENS.writer).toString('hex')} writer\n`);
    const anonymous = await startSecured(
      dir,
      { certificate: 'server.pem', key: 'server.key' },
      { tokenFile: 'tokens.txt', roles: { anonymous: { '*': 'cache-reader' }, 'token:writer': { '*': 'cache-writer' } } },
    );
    const c = connect(anonymous, grpc.credentials.createSsl(await readFile(ca.ca)));
    try {
      expect(codeOf(await callAs(undefined, c.cas, c.cas.FindMissingBlobs, { instanceName: '', blobDigests: [] }))).toBe(grpc.status.OK);
      expect(codeOf(await callAs(undefined, c.cas, c.cas.BatchUpdateBlobs, { instanceName: '', requests: [blob('x')] }))).toBe(grpc.status.PERMISSION_DENIED);
      expect(codeOf(await callAs('not-a-token', c.cas, c.cas.FindMissingBlobs, { instanceName: '', blobDigests: [] }))).toBe(grpc.status.UNAUTHENTICATED);
      expect(codeOf(await callAs(TOKENS.writer, c.cas, c.cas.BatchUpdateBlobs, { instanceName: '', requests: [blob('x')] }))).toBe(grpc.status.OK);
    } finally {
      c.close();
      await anonymous.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
