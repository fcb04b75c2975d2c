import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { throwConfigError } from '../../../src/core/index.js';
import { parseCacheServerConfig } from '../../../scheduler/index.js';
import { readExecutorConfigFile } from '../../../executor/index.js';

const DEPLOY = join(import.meta.dirname, '../../../deploy/secured');
const json = (name: string): unknown => JSON.parse(readFileSync(join(DEPLOY, name), 'utf8'));

describe('the secured sample configs under deploy/secured', () => {
  it('scheduler.json parses into TLS with optional client certificates and auth with its role grants', () => {
    const config = parseCacheServerConfig(json('scheduler.json'), 'scheduler.json', DEPLOY);
    expect(config.security.tls).toEqual({
      certificate: '/etc/kiln/tls/server.pem',
      key: '/etc/kiln/tls/server.key',
      clientCa: '/etc/kiln/tls/ca.pem',
      requireClientCertificate: false,
    });
    expect(config.security.auth.kind).toBe('on');
    if (config.security.auth.kind !== 'on') return;
    expect(config.security.auth.grants).toContainEqual({ principal: 'cn:kiln-executor', instance: '*', role: 'worker' });
    expect(config.security.auth.grants.filter((g) => g.principal === 'token:developer').map((g) => g.role)).toEqual(['cache-reader', 'executor-client']);
  });

  it('executor.json parses with its scheduler credentials', () => {
    const file = readExecutorConfigFile(json('executor.json'), throwConfigError);
    expect(file.scheduler).toBe('grpcs://scheduler.example.com:8980');
    expect(file['tls-certificate']).toBe('/etc/kiln/tls/executor.pem');
  });

  it('names the field path of a mistake in the security sections', () => {
    const bad = (extra: Record<string, unknown>) => () => parseCacheServerConfig({ instanceNames: ['', 'ci'], ...extra }, 'x.json', dirname(DEPLOY));
    expect(bad({ auth: { tokenFile: 't', roles: { 'token:a': { nope: 'cache-reader' } } } })).toThrow(
      /x\.json: auth\.roles\["token:a"\]\["nope"\]: not an instance/,
    );
    expect(bad({ auth: { tokenFile: 't', roles: { 'token:a': { '*': ['cache-reader', 'boss'] } } } })).toThrow(
      /auth\.roles\["token:a"\]\["\*"\]\[1\]: expected one of/,
    );
    expect(bad({ auth: { roles: {} } })).toThrow(/x\.json: auth: needs "tokenFile", "serviceAccounts" or "tls.clientCa"/);
    expect(bad({ tls: { certificate: 'a.pem' } })).toThrow(/x\.json: tls\.key: expected a non-empty string/);
    expect(bad({ auth: { tokenFile: 't', roles: { alice: {} } } })).toThrow(/auth\.roles\["alice"\]: expected a principal/);
  });
});
