import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newToken } from '../../scheduler/index.js';
import { startExecutor } from '../../executor/index.js';
import { issueCertificate, makeCa, opensslAvailable } from '../scheduler/security/test-certificates.js';
import { E2eWorkspace, tempDir } from './e2e-workspace.js';
import { startKilnCluster } from './kiln-cluster.js';

const haveOpenssl = opensslAvailable();

const WORKSPACE = {
  'MODULE.bazel': 'module(name = "secured")\n',
  'pkg/BUILD': 'genrule(name = "g", outs = ["out.txt"], cmd = "echo built > $@")\n',
};

describe.skipIf(!haveOpenssl)('kiln build against a secured kiln cluster up (TLS + tokens)', () => {
  it('builds over grpcs:// with a bearer token, then with a credential helper; refuses an executor without credentials', { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const ca = await makeCa(dir, 'cluster');
    await issueCertificate(ca, dir, 'server', 'kiln-scheduler');
    const developer = newToken('developer');
    writeFileSync(join(dir, 'tokens.txt'), `${developer.line}\n`);
    writeFileSync(
      join(dir, 'cluster.json'),
      JSON.stringify({
        tls: { certificate: 'server.pem', key: 'server.key' },
        auth: { tokenFile: 'tokens.txt', roles: { 'token:developer': { '*': 'executor-client' } } },
        executor: { 'tls-ca': 'cluster-ca.pem' },
      }),
    );
    const cluster = await startKilnCluster(['--executors', '1', '--runner', 'local', '--config', join(dir, 'cluster.json')]);
    expect(cluster.endpoint).toMatch(/^grpcs:\/\/127\.0\.0\.1:\d+$/);
    const flags = [`--remote_executor=${cluster.endpoint}`, `--tls_certificate=${ca.ca}`];

    const withHeader = new E2eWorkspace(WORKSPACE);
    const built = await withHeader.kiln(['build', ...flags, `--remote_header=authorization=Bearer ${developer.token}`, '//pkg:g']);
    expect(built.code, built.stderr).toBe(0);
    expect(built.stderr).toMatch(/1 remote/);

    const refused = new E2eWorkspace(WORKSPACE);
    const denied = await refused.kiln(['build', ...flags, '--remote_header=authorization=Bearer wrong', '//pkg:g']);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/UNAUTHENTICATED/);

    const helper = join(dir, 'helper.sh');
    writeFileSync(helper, `#!/bin/sh\ncat > ${join(dir, 'request.json')}\necho '{"headers": {"Authorization": ["Bearer ${developer.token}"]}}'\n`);
    chmodSync(helper, 0o755);
    const withHelper = new E2eWorkspace(WORKSPACE);
    const helped = await withHelper.kiln(['build', ...flags, `--credential_helper=127.0.0.1=${helper}`, '//pkg:g']);
    expect(helped.code, helped.stderr).toBe(0);

    // An executor without worker credentials is refused and says why.
    const executor = await startExecutor(
      {
        scheduler: cluster.endpoint,
        credentials: { tlsCa: ca.ca },
        instanceName: '',
        name: 'stranger',
        slots: 1,
        runner: 'local',
        workDirectory: join(dir, 'stranger'),
        cacheBytes: 1 << 20,
        platform: [],
      },
      () => undefined,
    );
    const reason = await executor.refused;
    await executor.stop();
    expect(reason).toMatch(/refused executor stranger \(UNAUTHENTICATED.*worker role/);
  });
});
