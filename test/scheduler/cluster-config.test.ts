import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/core/index.js';
import { parseSchedulerRoleConfig, parseStorageRoleConfig } from '../../scheduler/index.js';
import { readExecutorConfigFile, resolveExecutorConfig } from '../../executor/index.js';
import { parseClusterUpConfig } from '../../src/cli/cluster-up-config.js';

const load = (parse: (json: unknown) => unknown, file: string) => (text: string) => () => parseConfigText(text, file, parse);
const scheduler = load((json) => parseSchedulerRoleConfig(json, '/etc/kiln'), 'scheduler.json');
const storage = load((json) => parseStorageRoleConfig(json, '/etc/kiln'), 'storage.json');
const executor = load((json) => readExecutorConfigFile(json), 'executor.json');
const cluster = load((json) => parseClusterUpConfig(json, '/etc/kiln'), 'cluster.json');

describe('one config parser per role, every error naming the file and the field path', () => {
  it.each([
    // wrong type
    [scheduler('{"tls": {"certificate": 3, "key": "k"}}'), 'scheduler.json: tls.certificate: expected a non-empty string, got 3'],
    [storage('{"port": "8981"}'), 'storage.json: port: expected an integer from 0 to 65535, got "8981"'],
    [executor('{"slots": "4"}'), 'executor.json: slots: expected a positive integer, got "4"'],
    [cluster('{"executor": {"tls-ca": 1}}'), 'cluster.json: executor.tls-ca: expected a non-empty string, got 1'],
    // unknown field
    [scheduler('{"tsl": {}}'), /^scheduler\.json: tsl: unknown field \(allowed: host, port, .*, execution\)$/],
    [scheduler('{"executor": {}}'), /^scheduler\.json: executor: unknown field/],
    [storage('{"execution": {}}'), /^storage\.json: execution: a storage node runs no actions/],
    [cluster('{"executor": {"slots": 2}}'), /^cluster\.json: executor\.slots: unknown field \(allowed: memory-limit/],
    [executor('{"tls": {}}'), /^executor\.json: tls: unknown field \(allowed: scheduler, /],
    // missing required field
    [storage('{"tls": {"certificate": "c.pem"}}'), 'storage.json: tls.key: expected a non-empty string, got nothing'],
    [storage('{"instances": {"x": {"cas": {"kind": "memory"}}}}'), 'storage.json: instances["x"].cas.maxBytes: expected a positive integer, got nothing'],
    // bad enum
    [
      scheduler('{"execution": {"platformRules": {"cores": "most"}}}'),
      /^scheduler\.json: execution\.platformRules\.cores: expected one of "exact", "minimum", "ignore", got "most"$/,
    ],
    [executor('{"runner": "podman"}'), 'executor.json: runner: expected one of "local", "docker", got "podman"'],
    [
      storage('{"auth": {"tokenFile": "t", "roles": {"token:a": {"*": "boss"}}}}'),
      /^storage\.json: auth\.roles\["token:a"\]\["\*"\]: expected one of "cache-reader"/,
    ],
    // JSON syntax, with its position
    [scheduler('{\n  "port": 8980\n  "host": "0.0.0.0"\n}'), /^scheduler\.json:3:3: not valid JSON: /],
    [executor('{"slots": 4,}'), /^executor\.json:1:13: not valid JSON: /],
    [storage('{"port": tru}'), /^storage\.json:1:13: not valid JSON: Unexpected token/],
    [cluster('{"executor": '), /^cluster\.json:1:14: not valid JSON: Unexpected end/],
    [storage('[1, 2,\n  3,]'), /^storage\.json:2:5: not valid JSON: /],
    [executor('[]'), 'executor.json: expected an object, got []'],
  ] as const)('%#: %s', (parse: () => unknown, message: string | RegExp) => {
    expect(parse).toThrow(message);
  });

  it('reads the sections of each role with their defaults', () => {
    const s = parseConfigText('{"port": 8980, "execution": {"maxRetries": 5}}', 'scheduler.json', (json) => parseSchedulerRoleConfig(json, '/etc/kiln'));
    expect(s.server.port).toBe(8980);
    expect(s.server.security.auth).toEqual({ kind: 'off' });
    expect(s.execution.maxRetries).toBe(5);
    expect(s.execution.heartbeatIntervalMs).toBe(10_000);
    const c = parseClusterUpConfig({ executor: { 'memory-limit': '2g', 'tls-ca': 'ca.pem' } }, '/etc/kiln');
    expect(c.executor).toEqual({ limits: { 'memory-limit': '2g' }, credentialFiles: { 'tls-ca': '/etc/kiln/ca.pem' } });
    expect(c.scheduler.server.instances.map((i) => i.name)).toEqual(['']);
  });

  it("resolves the executor's config: a flag wins over the file, the file over the default", () => {
    const file = parseConfigText('{"scheduler": "grpc://h:1", "slots": 3, "memory-limit": "2g", "platform": ["pool=big"]}', 'executor.json', (json) =>
      readExecutorConfigFile(json),
    );
    const flags = new Map([['slots', ['5']]]);
    const config = resolveExecutorConfig({ flags, file, fileName: 'executor.json', cwd: '/work', defaultWorkDirectory: '/tmp/kiln-executor-1' });
    expect(config).toMatchObject({ scheduler: 'grpc://h:1', slots: 5, runner: 'local', instanceName: '', workDirectory: '/tmp/kiln-executor-1' });
    expect(config.platform).toEqual([{ name: 'pool', value: 'big' }]);
    expect(config.limits?.defaults.memoryBytes).toBe(2 * 1024 ** 3);
    const bad = parseConfigText('{"memory-limit": "1m"}', 'executor.json', (json) => readExecutorConfigFile(json));
    expect(() =>
      resolveExecutorConfig({
        flags: new Map([['scheduler', ['grpc://h:1']]]),
        file: bad,
        fileName: 'executor.json',
        cwd: '/',
        defaultWorkDirectory: '/tmp/x',
      }),
    ).toThrow(/^executor\.json: memory-limit: expected bytes .* of at least 6m/);
  });
});
