import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newToken } from '../../scheduler/index.js';
import { BAZEL_2, BAZEL_2_MISSING, runBazel2 } from '../setup/bazel-2.js';
import { needTool } from '../setup/need-tool.js';
import { issueCertificate, makeCa, opensslAvailable } from '../scheduler/security/test-certificates.js';
import { E2eWorkspace, tempDir } from './e2e-workspace.js';
import { startKilnCluster } from './kiln-cluster.js';

// A cluster that checks client certificates (mutual TLS) and tokens, with roles by certificate name:
// Kiln builds on it with Bazel's TLS flags (`--tls_certificate`, `--tls_client_certificate`,
// `--tls_client_key`), byte-identical to a local build; a developer's `cache-reader` certificate
// gets cache hits and cannot write the action cache; a caller without credentials is `anonymous`,
// which this cluster lets read only. Bazel 2.1.0 connects over TLS as `anonymous`: it has no client
// certificate flags ("Unrecognized option: --tls_client_certificate") and sends no --remote_header
// on GetCapabilities and ByteStream (fixed in Bazel by PR #10634, after 2.1.0), so it cannot hold a
// writing role here; the reference Bazel 4.2.3 (Debian's) opens no TLS channel at all ("Failed to
// init TLS infrastructure: JDK provider does not support ALPN protocol", its Netty on Debian's JDK 17).
const haveTools = opensslAvailable() && needTool('Bazel 2.1.0', BAZEL_2 !== '', BAZEL_2_MISSING);

const BUILD = 'genrule(name = "g", srcs = ["in.txt"], outs = ["out.txt"], cmd = "tr a-z A-Z < $< > $@")\n';

describe.skipIf(!haveTools)('mutual TLS and tokens: Kiln with client certificates, Bazel 2.1.0 with a token', () => {
  it('builds with a client certificate, hits the cache read-only with another, and refuses a client without one', { timeout: 300_000 }, async () => {
    const dir = tempDir();
    const ca = await makeCa(dir, 'team');
    await issueCertificate(ca, dir, 'server', 'kiln-scheduler');
    const ci = await issueCertificate(ca, dir, 'ci', 'ci');
    const dev = await issueCertificate(ca, dir, 'dev', 'dev');
    const executor = await issueCertificate(ca, dir, 'executor', 'executor');
    const holder = newToken('someone');
    writeFileSync(join(dir, 'tokens.txt'), `${holder.line}\n`);
    writeFileSync(
      join(dir, 'cluster.json'),
      JSON.stringify({
        tls: { certificate: 'server.pem', key: 'server.key', clientCa: 'team-ca.pem' },
        auth: {
          tokenFile: 'tokens.txt',
          roles: {
            'cn:ci': { '*': 'executor-client' },
            'cn:dev': { '*': 'cache-reader' },
            'cn:executor': { '*': 'worker' },
            anonymous: { '*': 'cache-reader' },
          },
        },
        executor: { 'tls-ca': 'team-ca.pem', 'tls-certificate': executor.certificate, 'tls-key': executor.key },
      }),
    );
    const cluster = await startKilnCluster(['--executors', '1', '--runner', 'local', '--config', join(dir, 'cluster.json')]);
    const files = { 'MODULE.bazel': '', BUILD, 'in.txt': 'made remotely\n' };
    const tls = (who: { certificate: string; key: string }) => [
      `--tls_certificate=${ca.ca}`,
      `--tls_client_certificate=${who.certificate}`,
      `--tls_client_key=${who.key}`,
    ];

    const local = new E2eWorkspace(files);
    expect((await local.kiln(['build', '--spawn_strategy=local', '//:g'])).code).toBe(0);
    const expected = local.read('kiln-bin/out.txt');

    const kiln = new E2eWorkspace(files);
    const built = await kiln.kiln(['build', `--remote_executor=${cluster.endpoint}`, ...tls(ci), '//:g']);
    expect(built.code, built.stderr).toBe(0);
    expect(built.stderr).toContain('1 process: 1 remote.');
    expect(kiln.read('kiln-bin/out.txt')).toBe(expected);

    // A developer's certificate reads the cache (a hit) and may not write it.
    const reader = new E2eWorkspace(files);
    const hit = await reader.kiln(['build', `--remote_cache=${cluster.endpoint}`, ...tls(dev), '//:g']);
    expect(hit.code, hit.stderr).toBe(0);
    expect(hit.stderr).toContain('1 process: 1 remote cache hit.');
    reader.write({ 'in.txt': 'a developer edit\n' });
    const edited = await reader.kiln(['build', `--remote_cache=${cluster.endpoint}`, ...tls(dev), '//:g']);
    expect(edited.code, edited.stderr).toBe(0);
    expect(edited.stderr).toMatch(/WARNING: .*PERMISSION_DENIED/);
    // Nothing of the developer's reached the action cache: another checkout of the edit misses.
    const other = new E2eWorkspace({ ...files, 'in.txt': 'a developer edit\n' });
    const miss = await other.kiln(['build', `--remote_cache=${cluster.endpoint}`, ...tls(dev), '//:g']);
    expect(miss.code, miss.stderr).toBe(0);
    expect(miss.stderr).toMatch(/1 process: 1 (local|linux-sandbox)\./);

    // Neither a client certificate nor a token: `anonymous`, whose role here only reads.
    const stranger = new E2eWorkspace({ ...files, 'in.txt': 'not built before\n' });
    const refused = await stranger.kiln(['build', `--remote_executor=${cluster.endpoint}`, `--tls_certificate=${ca.ca}`, '--remote_retries=0', '//:g']);
    expect(refused.code).toBe(34);
    expect(refused.stderr).toMatch(/remote execution on grpcs:\/\/127\.0\.0\.1:\d+: .*PERMISSION_DENIED/);
    // A token that is not in the token file is refused, never taken for anonymous.
    const forged = await stranger.kiln([
      'build',
      `--remote_cache=${cluster.endpoint}`,
      `--tls_certificate=${ca.ca}`,
      '--remote_header=authorization=Bearer forged',
      '//:g',
    ]);
    expect(forged.stderr).toMatch(/WARNING: .*UNAUTHENTICATED: the bearer token is not valid/);

    // Bazel 2.1.0 over TLS, anonymous: it reads the cache (its genrule's action key is not Kiln's, so a
    // miss), builds locally, and its upload is refused.
    const root = tempDir();
    for (const d of ['ws', 'home', 'tmp']) mkdirSync(join(root, d));
    writeFileSync(join(root, 'ws', 'WORKSPACE'), 'workspace(name = "mtls")\n');
    writeFileSync(join(root, 'ws', 'BUILD'), BUILD);
    writeFileSync(join(root, 'ws', 'in.txt'), files['in.txt']);
    const run = await runBazel2(root, ['build', '--noshow_progress', '--color=no', `--remote_cache=${cluster.endpoint}`, `--tls_certificate=${ca.ca}`, '//:g']);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/WARNING: Writing to Remote Cache:[\s\S]*PERMISSION_DENIED/);
    expect(readFileSync(join(root, 'ws', 'bazel-bin', 'out.txt'), 'utf8')).toBe(expected);
  });
});
