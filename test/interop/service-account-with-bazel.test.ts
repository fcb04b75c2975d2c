import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newServiceAccount } from '../../scheduler/index.js';
import { startKilnCluster } from '../e2e/kiln-cluster.js';
import { tempDir } from '../e2e/e2e-workspace.js';
import { BAZEL_2, BAZEL_2_MISSING, runBazel2 } from '../setup/bazel-2.js';
import { needTool } from '../setup/need-tool.js';
import { issueCertificate, makeCa, opensslAvailable } from '../scheduler/security/test-certificates.js';

// Bazel 2.1.0 on a cluster with TLS and auth on, authenticated on every call: it sends no
// `--remote_header` on ByteStream, but `--google_credentials=KEY.json` makes its gRPC stack attach
// an OAuth access token to all calls, which it gets from the key file's `token_uri`: the cluster's
// service-account token endpoint, trading the assertion the key signs for a token that acts as the
// token of the account's name. So a CI account (cache-writer) uploads and a later checkout gets
// remote cache hits; a developer account (cache-reader) gets the hits and cannot write; without
// credentials every call is refused (anonymous holds no role here).
const haveTools = opensslAvailable() && needTool('Bazel 2.1.0', BAZEL_2 !== '', BAZEL_2_MISSING);

const BUILD = 'genrule(name = "g", srcs = ["in.txt"], outs = ["out.txt"], cmd = "tr a-z A-Z < $< > $@")\n';

/** A port free right now, for the token endpoint whose URL goes into the key files before the cluster starts. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe.skipIf(!haveTools)('Bazel 2.1.0 with service-account credentials on a secured cluster', () => {
  it('writes and hits the cache as CI, hits read-only as a developer, and is refused without credentials', { timeout: 300_000 }, async () => {
    const dir = tempDir();
    const ca = await makeCa(dir, 'team');
    await issueCertificate(ca, dir, 'server', 'kiln-scheduler');
    const port = await freePort();
    const tokenUri = `http://127.0.0.1:${port}/token`;
    const accounts: Record<string, { email: string; publicKey: string }> = {};
    for (const name of ['ci', 'dev']) {
      const made = newServiceAccount(name, `${name}@kiln.test`, tokenUri);
      writeFileSync(join(dir, `${name}.json`), made.keyFile);
      writeFileSync(join(dir, `${name}.pub.pem`), made.publicKeyPem);
      accounts[name] = { email: `${name}@kiln.test`, publicKey: `${name}.pub.pem` };
    }
    writeFileSync(
      join(dir, 'cluster.json'),
      JSON.stringify({
        tls: { certificate: 'server.pem', key: 'server.key' },
        auth: {
          serviceAccounts: accounts,
          tokenEndpoint: { host: '127.0.0.1', port, plaintext: true },
          roles: { 'token:ci': { '*': 'cache-writer' }, 'token:dev': { '*': 'cache-reader' } },
        },
      }),
    );
    const cluster = await startKilnCluster(['--config', join(dir, 'cluster.json')]);
    try {
      const checkout = (input: string) => {
        const root = tempDir();
        for (const d of ['ws', 'home', 'tmp']) mkdirSync(join(root, d));
        writeFileSync(join(root, 'ws', 'WORKSPACE'), 'workspace(name = "sa")\n');
        writeFileSync(join(root, 'ws', 'BUILD'), BUILD);
        writeFileSync(join(root, 'ws', 'in.txt'), input);
        return root;
      };
      const remote = (account?: string) => [
        'build',
        '--noshow_progress',
        '--color=no',
        `--remote_cache=${cluster.endpoint}`,
        `--tls_certificate=${ca.ca}`,
        ...(account ? [`--google_credentials=${join(dir, `${account}.json`)}`] : []),
        '//:g',
      ];

      // CI builds and uploads: no warning about writing, and the output is right.
      const first = checkout('shared work\n');
      const built = await runBazel2(first, remote('ci'));
      expect(built.code, built.output).toBe(0);
      expect(built.output).not.toMatch(/Remote Cache/);
      expect(readFileSync(join(first, 'ws', 'bazel-bin', 'out.txt'), 'utf8')).toBe('SHARED WORK\n');

      // A second checkout of CI's: every action from the remote cache.
      const second = checkout('shared work\n');
      const hit = await runBazel2(second, remote('ci'));
      expect(hit.code, hit.output).toBe(0);
      expect(hit.output).toContain('1 process: 1 remote cache hit.');

      // A developer reads the same result, and may not write one of their own.
      const dev = checkout('shared work\n');
      const devHit = await runBazel2(dev, remote('dev'));
      expect(devHit.output).toContain('1 process: 1 remote cache hit.');
      const devEdit = checkout('a local edit\n');
      const refusedWrite = await runBazel2(devEdit, remote('dev'));
      expect(refusedWrite.code, refusedWrite.output).toBe(0);
      expect(refusedWrite.output).toMatch(/WARNING: Writing to Remote Cache:[\s\S]*PERMISSION_DENIED/);

      // No credentials: refused on every call (a read is a warning, the build goes on locally).
      const stranger = checkout('shared work\n');
      const anonymous = await runBazel2(stranger, remote());
      expect(anonymous.output).toMatch(/UNAUTHENTICATED/);
      expect(anonymous.output).not.toContain('remote cache hit');
    } finally {
      await cluster.stop();
    }
  });
});
