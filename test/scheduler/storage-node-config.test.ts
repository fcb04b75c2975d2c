import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/index.js';
import { parseCacheServerConfig, parseStorageNodeConfig } from '../../scheduler/index.js';

const parse = (value: unknown) => parseStorageNodeConfig(value, 'node.json', '/etc/kiln');
const fails = (run: () => unknown) => {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('storage node config', () => {
  it('serves its store with a plain action cache and no referenced-blob check (its CAS is one shard)', () => {
    const config = parse({ storage: { kind: 'blocks', path: 'data' } });
    expect(config.instances).toEqual([
      {
        name: '',
        cas: { kind: 'verifying', backend: { kind: 'blocks', path: '/etc/kiln/data', maxBytes: 64 * 2 ** 30, keyspace: 'cas' } },
        actionCache: { kind: 'blocks', path: '/etc/kiln/data', maxBytes: 8 * 2 ** 30, keyspace: 'ac' },
        checkActionResultReferences: false,
      },
    ]);
  });

  it('needs a store and runs no actions', () => {
    expect(fails(() => parse({}))).toMatch(/^node\.json: storage: a storage node needs a store/);
    expect(fails(() => parse({ storage: { kind: 'memory' }, execution: {} }))).toMatch(/^node\.json: execution: a storage node runs no actions/);
    expect(parseStorageNodeConfig({}, 'flags', '/', { storageDir: '/srv/kiln' }).instances[0]!.cas).toMatchObject({ backend: { path: '/srv/kiln' } });
  });
});

describe('a scheduler whose storage is on storage nodes', () => {
  const node = (endpoint: string) => ({ kind: 'grpc', endpoint, tls: { ca: 'ca.pem' }, tokenFile: 'token' });

  it('resolves the TLS and token files of grpc backends against the config file', () => {
    const config = parseCacheServerConfig(
      { instances: { '': { cas: { kind: 'mirrored', a: node('grpcs://a:1'), b: node('grpcs://b:1') }, actionCache: { kind: 'memory', maxBytes: 100 } } } },
      'scheduler.json',
      '/etc/kiln',
    );
    expect(config.instances[0]!.cas).toEqual({
      kind: 'mirrored',
      a: { kind: 'grpc', endpoint: 'grpcs://a:1', tls: { ca: '/etc/kiln/ca.pem' }, tokenFile: '/etc/kiln/token' },
      b: { kind: 'grpc', endpoint: 'grpcs://b:1', tls: { ca: '/etc/kiln/ca.pem' }, tokenFile: '/etc/kiln/token' },
    });
  });

  it('names the field of an endpoint the client cannot dial', () => {
    const message = fails(() =>
      parseCacheServerConfig(
        {
          instances: {
            '': {
              cas: { kind: 'sharding', shards: [{ name: 's1', backend: { kind: 'mirrored', a: node('grpc://a:1'), b: node('http://b:1') } }] },
              actionCache: { kind: 'memory', maxBytes: 100 },
            },
          },
        },
        'scheduler.json',
        '/etc/kiln',
      ),
    );
    expect(message).toMatch(/^scheduler\.json: instances\[""\]\.cas\.shards\[0\]\.backend\.b\.endpoint: http:\/\/b:1: HTTP caches are not supported/);
  });
});
