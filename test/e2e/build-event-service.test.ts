import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EVERYONE, newToken, parseCacheServerConfig, startCacheServer, type CacheServer } from '../../scheduler/index.js';
import { issueCertificate, makeCa, opensslAvailable } from '../scheduler/security/test-certificates.js';
import * as grpc from '@grpc/grpc-js';
import { delimitedMessages, googleBuild } from '../../src/core/index.js';
import { E2eWorkspace, tempDir } from './e2e-workspace.js';

// `--bes_backend`: Kiln publishes its Build Event Protocol stream to the Build Event Service of
// Kiln's own cluster (a cache server on loopback, started here), which files the invocation with
// its targets and tests; a broken or refusing service fails the command with Bazel's exit codes
// (38 transient, as Bazel 2.1.0 exits against the same server in test/interop), the build itself done.
const files = {
  WORKSPACE: '',
  'pkg/BUILD': 'genrule(name = "gen", outs = ["gen.txt"], cmd = "echo hello > $@")\nsh_test(name = "t", srcs = ["t.sh"], data = [":gen"])\n',
  'pkg/t.sh': '#!/bin/sh\necho ok\n',
};

let server: CacheServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function startServer(buildEvents: Record<string, unknown> = {}): Promise<CacheServer> {
  const ws = new E2eWorkspace({});
  const config = parseCacheServerConfig({ buildEvents }, 'e2e', ws.root, { host: '127.0.0.1', port: 0 });
  server = await startCacheServer(config, { log: { info: () => undefined, warn: () => undefined } });
  return server;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * A loopback TCP proxy to `port` that cuts its first connection once `cutAfter` bytes went from the
 * client to the server (a network break mid-stream); later connections pass whole.
 */
async function cuttingProxy(port: number, cutAfter: number): Promise<{ port: number; cuts: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const state = { port: 0, cuts: 0, close: async () => undefined as void };
  const proxy = createServer((client) => {
    const first = connections++ === 0;
    const upstream = connect(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    let forwarded = 0;
    client.on('data', (chunk: Buffer) => {
      forwarded += chunk.length;
      if (first && forwarded > cutAfter) {
        state.cuts++;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      a.on('error', () => b.destroy());
      a.on('close', () => b.destroy());
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  state.port = (proxy.address() as { port: number }).port;
  state.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => proxy.close(resolve));
  };
  return state;
}

describe('--bes_backend', () => {
  it('publishes the invocation with its targets and tests to the cluster', async () => {
    const s = await startServer();
    const ws = new E2eWorkspace(files);
    const id = randomUUID();
    const file = join(ws.home, 'bep.bin');
    const run = await ws.kiln([
      'test',
      '--spawn_strategy=local',
      `--bes_backend=${s.endpoint}`,
      '--bes_results_url=http://ui.example/invocation/',
      `--invocation_id=${id}`,
      '--bes_header=x-team=tools',
      `--build_event_binary_file=${file}`,
      '//pkg:t',
      '//pkg:gen',
    ]);
    expect(run.code, run.stderr).toBe(0);
    // Printed when the stream starts and again at the end, as Bazel does.
    expect(run.stderr.split('\n').filter((l) => l === `INFO: Streaming build results to: http://ui.example/invocation/${id}`)).toHaveLength(2);

    const [summary, ...others] = s.buildEvents!.list(EVERYONE);
    expect(others).toEqual([]);
    expect(summary).toMatchObject({
      invocationId: id,
      status: 'succeeded',
      command: 'test',
      patterns: ['//pkg:t', '//pkg:gen'],
      exitCode: 'SUCCESS',
      targetCount: 2,
    });
    const details = s.buildEvents!.get(EVERYONE, id)!;
    expect(details.targets.map((t) => [t.label, t.kind, t.success]).sort()).toEqual([
      ['//pkg:gen', 'genrule rule', true],
      ['//pkg:t', 'sh_test rule', true],
    ]);
    expect(details.attemptResult).toBe('COMMAND_SUCCEEDED');
    // The service holds the very stream the file holds, event for event.
    expect(s.buildEvents!.rawEvents(EVERYONE, id)).toEqual(delimitedMessages(readFileSync(file)));
    const events = s.buildEvents!.events(EVERYONE, id)!;
    expect(events.find((e) => e.testSummary)?.id?.testSummary?.label).toBe('//pkg:t');
  });

  it('sends the unacknowledged events again on a new stream when the connection breaks mid-stream, and the invocation is whole', async () => {
    const s = await startServer();
    const port = Number(s.endpoint.split(':').at(-1));
    const proxy = await cuttingProxy(port, 6000);
    try {
      const ws = new E2eWorkspace(files);
      const id = randomUUID();
      const file = join(ws.home, 'bep.bin');
      const run = await ws.kiln([
        'test',
        '--spawn_strategy=local',
        `--bes_backend=grpc://127.0.0.1:${proxy.port}`,
        '--experimental_build_event_upload_retry_minimum_delay=10ms',
        `--invocation_id=${id}`,
        `--build_event_binary_file=${file}`,
        '//pkg:t',
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(proxy.cuts).toBe(1);
      expect(s.buildEvents!.list(EVERYONE)[0]).toMatchObject({ invocationId: id, status: 'succeeded', exitCode: 'SUCCESS' });
      expect(s.buildEvents!.rawEvents(EVERYONE, id)).toEqual(delimitedMessages(readFileSync(file)));
    } finally {
      await proxy.close();
    }
  });

  it.skipIf(!opensslAvailable())(
    'publishes over grpcs:// with --tls_certificate and a bearer token in --bes_header; a wrong token is refused with 45',
    async () => {
      const dir = tempDir();
      const ca = await makeCa(dir, 'bes');
      await issueCertificate(ca, dir, 'server', 'kiln-bes');
      const publisher = newToken('ci');
      writeFileSync(join(dir, 'tokens.txt'), `${publisher.line}\n`);
      const config = parseCacheServerConfig(
        {
          buildEvents: {},
          tls: { certificate: 'server.pem', key: 'server.key' },
          auth: { tokenFile: 'tokens.txt', roles: { 'token:ci': { '*': 'cache-writer' } } },
        },
        'e2e',
        dir,
        { host: '127.0.0.1', port: 0 },
      );
      server = await startCacheServer(config, { log: { info: () => undefined, warn: () => undefined } });
      expect(server.endpoint).toMatch(/^grpcs:/);
      const ws = new E2eWorkspace(files);
      const flags = ['build', '--spawn_strategy=local', `--bes_backend=${server.endpoint}`, `--tls_certificate=${ca.ca}`];
      const run = await ws.kiln([...flags, `--bes_header=authorization=Bearer ${publisher.token}`, '//pkg:gen']);
      expect(run.code, run.stderr).toBe(0);
      expect(server.buildEvents!.list(EVERYONE)[0]).toMatchObject({ status: 'succeeded', command: 'build', targetCount: 1 });
      const refused = await ws.kiln([...flags, '--bes_header=authorization=Bearer wrong', '//pkg:gen']);
      // UNAUTHENTICATED is no passing fault: Bazel's persistent upload error, 45, without retries.
      expect(refused.code).toBe(45);
      expect(refused.stderr).toMatch(/^ERROR: The Build Event Protocol upload failed: UNAUTHENTICATED: /m);
    },
  );

  it('gives up on a service that never acknowledges once --bes_timeout has passed after the build: 38, as Bazel', async () => {
    // A PublishBuildEvent server that takes every event and acknowledges none.
    const silent = new grpc.Server();
    silent.addService(googleBuild.PublishBuildEventService as unknown as grpc.ServiceDefinition, {
      PublishLifecycleEvent: (_call: unknown, done: grpc.sendUnaryData<object>) => done(null, {}),
      PublishBuildToolEventStream: (call: grpc.ServerDuplexStream<unknown, unknown>) => call.on('data', () => undefined),
    });
    const port = await new Promise<number>((resolve, reject) =>
      silent.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    try {
      const ws = new E2eWorkspace(files);
      const started = Date.now();
      const run = await ws.kiln(['build', '--spawn_strategy=local', `--bes_backend=grpc://127.0.0.1:${port}`, '--bes_timeout=300ms', '//pkg:gen']);
      expect(run.code).toBe(38);
      expect(run.stderr).toContain('ERROR: The Build Event Protocol upload timed out.');
      expect(run.stderr).toContain('INFO: Build completed successfully');
      expect(Date.now() - started).toBeLessThan(20_000);
    } finally {
      silent.forceShutdown();
    }
  });

  it('a service nobody answers fails the command with 38 after the build, its outputs built', async () => {
    const ws = new E2eWorkspace(files);
    const run = await ws.kiln([
      'build',
      '--spawn_strategy=local',
      `--bes_backend=grpc://127.0.0.1:${await closedPort()}`,
      '--experimental_build_event_upload_max_retries=2',
      '--experimental_build_event_upload_retry_minimum_delay=10ms',
      '//pkg:gen',
    ]);
    expect(run.code).toBe(38);
    // The lifecycle's first call is tried three times (two retries), then the upload is given up.
    expect(run.stderr).toMatch(/^ERROR: The Build Event Protocol upload failed: UNAVAILABLE: /m);
    expect(run.stderr).toContain('INFO: Build completed successfully');
    expect(ws.read('kiln-bin/pkg/gen.txt')).toBe('hello\n');
  });

  it('a service that refuses the stream past its limit fails it with 38 and RESOURCE_EXHAUSTED, as Bazel 2.1.0 does', async () => {
    const s = await startServer({ maxEventsPerInvocation: 5 });
    const ws = new E2eWorkspace(files);
    const run = await ws.kiln([
      'build',
      '--spawn_strategy=local',
      `--bes_backend=${s.endpoint}`,
      '--experimental_build_event_upload_retry_minimum_delay=10ms',
      '//pkg:gen',
    ]);
    expect(run.code).toBe(38);
    // RESOURCE_EXHAUSTED is transient: the unacknowledged events are sent again on new streams, refused each time.
    expect(run.stderr).toMatch(
      /The Build Event Protocol upload failed: All 4 retry attempts failed\. RESOURCE_EXHAUSTED: .*buildEvents\.maxEventsPerInvocation/,
    );
    expect(s.buildEvents!.list(EVERYONE)[0]).toMatchObject({ status: 'partial', eventCount: 5, command: 'build' });
  });

  it('refuses a malformed --bes_backend and --bes_header before building', async () => {
    const ws = new E2eWorkspace(files);
    const bad = await ws.kiln(['build', '--bes_backend=http://x:1', '//pkg:gen']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('ERROR: --bes_backend=http://x:1:');
    const header = await ws.kiln(['build', '--bes_backend=grpc://127.0.0.1:1', '--bes_header=novalue', '//pkg:gen']);
    expect(header.code).toBe(2);
    expect(header.stderr).toContain('ERROR: --bes_header=novalue: expected NAME=VALUE');
  });
});
