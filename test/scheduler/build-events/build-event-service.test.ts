import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildEventStream, delimitedMessages, googleBuild } from '../../../src/core/index.js';
import {
  EVERYONE,
  invocationViewer,
  newToken,
  parseCacheServerConfig,
  parseStorageNodeConfig,
  startCacheServer,
  type CacheServer,
} from '../../../scheduler/index.js';
import { until } from '../../setup/until.js';

// The Build Event Service on the cluster's port, driven by a gRPC client replaying what Bazel 2.1.0
// sent (test/core/proto/fixtures/bazel-2.1.0-genrule-build.bep) as --bes_backend sends it: lifecycle
// events, then one stream of OrderedBuildEvents numbered from 1, ending with component_stream_finished.

/**
 * The BEP events of a recording, each as Bazel encoded it: Bazel 2.1.0's `bazel build //...` of two
 * genrules, or Bazel 4.2.3's `bazel test //...` of a genrule and two sh_tests (`passes`, `fails`).
 */
function recordedEvents(name = 'bazel-2.1.0-genrule-build.bep'): Buffer[] {
  return delimitedMessages(readFileSync(new URL(`../../core/proto/fixtures/${name}`, import.meta.url)));
}
const RECORDED = recordedEvents();
const INVOCATION = buildEventStream.BuildEvent.decode(RECORDED[0]!).started!.uuid;

type ToolStream = grpc.ClientDuplexStream<googleBuild.PublishBuildToolEventStreamRequestInit, googleBuild.PublishBuildToolEventStreamResponse>;

const streamId = (invocationId: string) => ({ buildId: `build-${invocationId}`, invocationId, component: googleBuild.StreamId_BuildComponent.TOOL });

function bazelEvent(invocationId: string, sequenceNumber: number, bytes: Buffer, projectId = ''): googleBuild.PublishBuildToolEventStreamRequestInit {
  return {
    orderedBuildEvent: {
      streamId: streamId(invocationId),
      sequenceNumber,
      event: { bazelEvent: { typeUrl: 'type.googleapis.com/build_event_stream.BuildEvent', value: bytes } },
    },
    projectId,
  };
}

function finishEvent(invocationId: string, sequenceNumber: number, projectId = ''): googleBuild.PublishBuildToolEventStreamRequestInit {
  return {
    orderedBuildEvent: {
      streamId: streamId(invocationId),
      sequenceNumber,
      event: { componentStreamFinished: { type: googleBuild.BuildEvent_BuildComponentStreamFinished_FinishType.FINISHED } },
    },
    projectId,
  };
}

/** An open stream and what it has heard: the acked sequence numbers and, once it ended, its status. */
class Publisher {
  readonly acks: number[] = [];
  status?: grpc.StatusObject;
  private readonly stream: ToolStream;

  constructor(client: googleBuild.PublishBuildEventClient, metadata = new grpc.Metadata()) {
    this.stream = client.PublishBuildToolEventStream(metadata);
    this.stream.on('data', (r: googleBuild.PublishBuildToolEventStreamResponse) => this.acks.push(r.sequenceNumber));
    this.stream.on('status', (s: grpc.StatusObject) => (this.status = s));
    this.stream.on('error', () => undefined);
  }

  send(...requests: googleBuild.PublishBuildToolEventStreamRequestInit[]): void {
    for (const r of requests) this.stream.write(r);
  }

  async ended(): Promise<grpc.StatusObject> {
    await until(() => this.status !== undefined, 'the stream to end');
    return this.status!;
  }

  async close(): Promise<grpc.StatusObject> {
    this.stream.end();
    return this.ended();
  }

  cancel(): void {
    this.stream.cancel();
  }
}

async function start(buildEvents: Record<string, unknown>, extra: Record<string, unknown> = {}, dir = process.cwd()): Promise<CacheServer> {
  const config = parseCacheServerConfig({ buildEvents, ...extra }, 'test config', dir, { host: '127.0.0.1', port: 0 });
  return startCacheServer(config, { log: { info: () => undefined, warn: () => undefined } });
}

function client(server: CacheServer): googleBuild.PublishBuildEventClient {
  const Ctor = grpc.makeGenericClientConstructor(googleBuild.PublishBuildEventService as unknown as grpc.ServiceDefinition, 'PublishBuildEvent');
  return new Ctor(server.endpoint.replace(/^grpcs?:\/\//, ''), grpc.credentials.createInsecure()) as unknown as googleBuild.PublishBuildEventClient;
}

function lifecycle(
  c: googleBuild.PublishBuildEventClient,
  request: googleBuild.PublishLifecycleEventRequestInit,
  metadata = new grpc.Metadata(),
): Promise<grpc.ServiceError | null> {
  return new Promise((resolve) => c.PublishLifecycleEvent(request, metadata, {}, (err) => resolve(err)));
}

/** Publishes the whole recording under `invocationId` and waits for the stream to end. */
async function publishAll(
  c: googleBuild.PublishBuildEventClient,
  invocationId: string,
  projectId = '',
  metadata?: grpc.Metadata,
  events = RECORDED,
): Promise<Publisher> {
  const p = new Publisher(c, metadata);
  p.send(...events.map((bytes, i) => bazelEvent(invocationId, i + 1, bytes, projectId)), finishEvent(invocationId, events.length + 1, projectId));
  await p.close();
  return p;
}

describe('Build Event Service', () => {
  let server: CacheServer;
  let c: googleBuild.PublishBuildEventClient;

  afterEach(async () => {
    c?.close();
    await server?.close();
  });

  it('is not served without a buildEvents section', async () => {
    server = await startCacheServer(parseCacheServerConfig({}, 'test config', process.cwd(), { host: '127.0.0.1', port: 0 }), {
      log: { info: () => undefined, warn: () => undefined },
    });
    expect(server.services).not.toContain('google.devtools.build.v1.PublishBuildEvent');
    expect(server.buildEvents).toBeUndefined();
    c = client(server);
    const err = await lifecycle(c, {});
    expect(err?.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it('stores a Bazel stream whole, acks every event in order, and lists the invocation with its targets', async () => {
    server = await start({});
    c = client(server);
    expect(server.services).toContain('google.devtools.build.v1.PublishBuildEvent');
    const enqueued = await lifecycle(c, {
      buildEvent: { streamId: { buildId: 'b' }, sequenceNumber: 1, event: { buildEnqueued: {} } },
    });
    expect(enqueued).toBeNull();
    expect(
      await lifecycle(c, { buildEvent: { streamId: streamId(INVOCATION), sequenceNumber: 1, event: { invocationAttemptStarted: { attemptNumber: 1 } } } }),
    ).toBeNull();
    const queries = server.buildEvents!;
    expect(queries.list(EVERYONE).map((s) => [s.invocationId, s.status])).toEqual([[INVOCATION, 'running']]);

    const p = await publishAll(c, INVOCATION);
    expect(p.status?.code).toBe(grpc.status.OK);
    expect(p.acks).toEqual(Array.from({ length: RECORDED.length + 1 }, (_, i) => i + 1));

    expect(
      await lifecycle(c, {
        buildEvent: {
          streamId: streamId(INVOCATION),
          sequenceNumber: 2,
          event: { invocationAttemptFinished: { invocationStatus: { result: googleBuild.BuildStatus_Result.COMMAND_SUCCEEDED } } },
        },
      }),
    ).toBeNull();
    const [summary] = queries.list(EVERYONE);
    expect(summary).toMatchObject({
      invocationId: INVOCATION,
      instance: '',
      status: 'succeeded',
      command: 'build',
      patterns: ['//...'],
      user: 'root',
      buildToolVersion: '2.1.0',
      exitCode: 'SUCCESS',
      eventCount: RECORDED.length,
      bytes: RECORDED.reduce((n, b) => n + b.length, 0),
      targetCount: 2,
    });
    expect(summary!.host).not.toBe('');
    const details = queries.get(EVERYONE, INVOCATION)!;
    expect(details.targets).toEqual([
      { label: '//:hello', kind: 'genrule rule', success: true },
      { label: '//:twice', kind: 'genrule rule', success: true },
    ]);
    expect(details.attemptResult).toBe('COMMAND_SUCCEEDED');
    const raw = queries.rawEvents(EVERYONE, INVOCATION)!;
    raw.forEach((bytes, i) => expect(bytes.equals(RECORDED[i]!)).toBe(true));
    expect(queries.events(EVERYONE, INVOCATION, RECORDED.length - 1)![0]!.lastMessage).toBe(true);
    expect(queries.list(EVERYONE, { pattern: '...', user: 'ROO', status: 'succeeded' })).toHaveLength(1);
    expect(queries.list(EVERYONE, { status: 'failed' })).toHaveLength(0);
  });

  it("lists a Bazel 4.2.3 `bazel test` with its tests' statuses, failed by its exit code", async () => {
    server = await start({});
    c = client(server);
    const events = recordedEvents('bazel-4.2.3-sh-test.bep');
    const id = buildEventStream.BuildEvent.decode(events[0]!).started!.uuid;
    expect((await publishAll(c, id, '', undefined, events)).status?.code).toBe(grpc.status.OK);
    const details = server.buildEvents!.get(EVERYONE, id)!;
    expect(details.summary).toMatchObject({ status: 'failed', command: 'test', patterns: ['//...'], exitCode: 'TESTS_FAILED', eventCount: events.length });
    expect(details.targets).toEqual([
      { label: '//:fails', kind: 'sh_test rule', success: true, testStatus: 'FAILED' },
      { label: '//:hello', kind: 'genrule rule', success: true },
      { label: '//:passes', kind: 'sh_test rule', success: true, testStatus: 'PASSED' },
    ]);
    expect(server.buildEvents!.list(EVERYONE, { status: 'failed', command: 'test' })).toHaveLength(1);
  });

  it('acks a retransmitted event again without storing it twice; a gap is FAILED_PRECONDITION', async () => {
    server = await start({});
    c = client(server);
    const p = new Publisher(c);
    p.send(
      bazelEvent('retry', 1, RECORDED[0]!),
      bazelEvent('retry', 2, RECORDED[1]!),
      bazelEvent('retry', 1, RECORDED[0]!),
      bazelEvent('retry', 2, RECORDED[1]!),
    );
    p.send(bazelEvent('retry', 3, RECORDED[2]!));
    await until(() => p.acks.length === 5, 'five acks');
    expect(p.acks).toEqual([1, 2, 1, 2, 3]);
    expect(server.buildEvents!.get(EVERYONE, 'retry')!.summary.eventCount).toBe(3);
    p.send(bazelEvent('retry', 5, RECORDED[3]!));
    const status = await p.ended();
    expect(status.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(status.details).toContain('expected 4');
    expect(server.buildEvents!.get(EVERYONE, 'retry')!.summary.status).toBe('partial');
  });

  it('leaves a stream cut mid-build partial, and a new stream continues it where the acks stopped', async () => {
    server = await start({});
    c = client(server);
    const first = new Publisher(c);
    first.send(...RECORDED.slice(0, 10).map((b, i) => bazelEvent('cut', i + 1, b)));
    await until(() => first.acks.length === 10, 'ten acks');
    first.cancel();
    await until(() => server.buildEvents!.get(EVERYONE, 'cut')?.summary.status === 'partial', 'the cut invocation to be partial');
    expect(server.buildEvents!.get(EVERYONE, 'cut')!.summary).toMatchObject({ status: 'partial', eventCount: 10, command: 'build' });

    // As Bazel retries: a new stream resending from the first event it had no ack for (here two earlier).
    const second = new Publisher(c);
    second.send(...RECORDED.slice(8).map((b, i) => bazelEvent('cut', i + 9, b)));
    await until(() => second.acks.length === RECORDED.length - 8, 'the acks of the second stream');
    expect(server.buildEvents!.get(EVERYONE, 'cut')!.summary.status).toBe('running');
    second.send(finishEvent('cut', RECORDED.length + 1));
    expect((await second.close()).code).toBe(grpc.status.OK);
    const summary = server.buildEvents!.get(EVERYONE, 'cut')!.summary;
    expect(summary).toMatchObject({ status: 'succeeded', eventCount: RECORDED.length });
    const raw = server.buildEvents!.rawEvents(EVERYONE, 'cut')!;
    raw.forEach((bytes, i) => expect(bytes.equals(RECORDED[i]!)).toBe(true));
  });

  it('a stream that ends without component_stream_finished, or without BuildFinished, is partial', async () => {
    server = await start({});
    c = client(server);
    const halfClosed = new Publisher(c);
    halfClosed.send(bazelEvent('early-end', 1, RECORDED[0]!));
    expect((await halfClosed.close()).code).toBe(grpc.status.OK);
    const noBuildFinished = new Publisher(c);
    noBuildFinished.send(bazelEvent('no-finish', 1, RECORDED[0]!), finishEvent('no-finish', 2));
    expect((await noBuildFinished.close()).code).toBe(grpc.status.OK);
    const statuses = Object.fromEntries(server.buildEvents!.list(EVERYONE).map((s) => [s.invocationId, s.status]));
    expect(statuses).toEqual({ 'early-end': 'partial', 'no-finish': 'partial' });
  });

  it('refuses what is not a BEP stream: another Any type, undecodable bytes, a second invocation, a bad id', async () => {
    server = await start({});
    c = client(server);
    const cases: [googleBuild.PublishBuildToolEventStreamRequestInit[], grpc.status, string][] = [
      [
        [
          {
            orderedBuildEvent: {
              streamId: streamId('x1'),
              sequenceNumber: 1,
              event: { bazelEvent: { typeUrl: 'type.googleapis.com/foo.Bar', value: Buffer.alloc(0) } },
            },
          },
        ],
        grpc.status.INVALID_ARGUMENT,
        'not a build_event_stream.BuildEvent',
      ],
      [[bazelEvent('x2', 1, Buffer.from([0xff, 0xff, 0xff]))], grpc.status.INVALID_ARGUMENT, 'bazel_event is not'],
      [[bazelEvent('x3', 1, RECORDED[0]!), bazelEvent('other', 2, RECORDED[1]!)], grpc.status.INVALID_ARGUMENT, 'differs'],
      [[bazelEvent('../escape', 1, RECORDED[0]!)], grpc.status.INVALID_ARGUMENT, 'invocation_id'],
      [[bazelEvent('x4', 1, RECORDED[0]!, 'no-such-instance')], grpc.status.INVALID_ARGUMENT, 'no-such-instance'],
      [[bazelEvent('x5', 0, RECORDED[0]!)], grpc.status.INVALID_ARGUMENT, 'at least 1'],
    ];
    for (const [requests, code, text] of cases) {
      const p = new Publisher(c);
      p.send(...requests);
      const status = await p.ended();
      expect([grpc.status[status.code], status.details]).toEqual([grpc.status[code], expect.stringContaining(text)]);
    }
  });
});

describe('Build Event Service limits', () => {
  let server: CacheServer;
  let c: googleBuild.PublishBuildEventClient;

  afterEach(async () => {
    c?.close();
    await server?.close();
  });

  it('refuses an invocation past maxEventsPerInvocation with RESOURCE_EXHAUSTED and keeps it partial, bounded', async () => {
    server = await start({ maxEventsPerInvocation: 5 });
    c = client(server);
    const p = new Publisher(c);
    p.send(...RECORDED.slice(0, 10).map((b, i) => bazelEvent('flood', i + 1, b)));
    const status = await p.ended();
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.details).toContain('maxEventsPerInvocation');
    expect(p.acks).toEqual([1, 2, 3, 4, 5]);
    expect(server.buildEvents!.get(EVERYONE, 'flood')!.summary).toMatchObject({ status: 'partial', eventCount: 5 });
  });

  it('refuses bytes past maxBytesPerInvocation', async () => {
    const big = buildEventStream.BuildEvent.encode({ id: { progress: { opaqueCount: 1 } }, progress: { stderr: 'x'.repeat(4000) } });
    server = await start({ maxBytesPerInvocation: 10_000, maxTotalBytes: 10_000 });
    c = client(server);
    const p = new Publisher(c);
    p.send(bazelEvent('bytes', 1, big), bazelEvent('bytes', 2, big), bazelEvent('bytes', 3, big));
    const status = await p.ended();
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.details).toContain('maxBytesPerInvocation');
    expect(p.acks).toEqual([1, 2]);
  });

  it('keeps maxInvocations, dropping the oldest finished, and refuses a new one when all are streaming', async () => {
    server = await start({ maxInvocations: 2 });
    c = client(server);
    await publishAll(c, 'one');
    await publishAll(c, 'two');
    await publishAll(c, 'three');
    expect(server.buildEvents!.list(EVERYONE).map((s) => s.invocationId)).toEqual(['three', 'two']);
    // A late event for the dropped one is refused, not the start of a new invocation.
    const late = new Publisher(c);
    late.send(bazelEvent('one', 1, RECORDED[0]!));
    expect((await late.ended()).code).toBe(grpc.status.RESOURCE_EXHAUSTED);

    const open = [new Publisher(c), new Publisher(c)];
    open.forEach((p, i) => p.send(bazelEvent(`open-${i}`, 1, RECORDED[0]!)));
    await until(() => open.every((p) => p.acks.length === 1), 'both streams to be acked');
    const refused = new Publisher(c);
    refused.send(bazelEvent('open-2', 1, RECORDED[0]!));
    const status = await refused.ended();
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.details).toContain('maxInvocations');
    for (const p of open) p.cancel();
  });

  it('keeps maxTotalBytes over all invocations by dropping the oldest', async () => {
    const size = RECORDED.reduce((n, b) => n + b.length, 0);
    server = await start({ maxTotalBytes: Math.floor(size * 2.5), maxBytesPerInvocation: size });
    c = client(server);
    for (const id of ['a', 'b', 'c', 'd']) await publishAll(c, id);
    expect(server.buildEvents!.list(EVERYONE).map((s) => s.invocationId)).toEqual(['d', 'c']);
  });

  it('parses its section: defaults, bounds, unknown fields', () => {
    const parse = (buildEvents: unknown) => parseCacheServerConfig({ buildEvents }, 'c.json', '/etc/kiln').buildEvents;
    expect(parse({})).toEqual({ maxInvocations: 1000, maxEventsPerInvocation: 100_000, maxBytesPerInvocation: 64 * 1024 * 1024, maxTotalBytes: 1024 ** 3 });
    expect(parse({ maxInvocations: 3, path: 'bes' })).toMatchObject({ maxInvocations: 3, path: '/etc/kiln/bes' });
    expect(() => parse({ maxInvocations: 0 })).toThrow(/c\.json: buildEvents\.maxInvocations/);
    expect(() => parse({ maxEvents: 1 })).toThrow(/buildEvents.*maxEvents/);
    expect(() => parse({ maxBytesPerInvocation: 100, maxTotalBytes: 10 })).toThrow(/buildEvents\.maxTotalBytes: must be at least/);
    expect(parseCacheServerConfig({}, 'c.json', '/').buildEvents).toBeUndefined();
    expect(() => parseStorageNodeConfig({ storage: { kind: 'memory' }, buildEvents: {} }, 'storage.json', '/')).toThrow(
      /storage\.json: buildEvents: a storage node serves no build events/,
    );
  });
});

describe('Build Event Service on disk (buildEvents.path)', () => {
  let dir: string;
  let server: CacheServer | undefined;
  let c: googleBuild.PublishBuildEventClient | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-bes-disk-'));
  });

  afterAll(async () => {
    c?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps invocations across a restart: events.bep is what --build_event_binary_file writes; a cut stream comes back partial', async () => {
    server = await start({ path: 'bes', maxInvocations: 3 }, {}, dir);
    c = client(server);
    await publishAll(c, 'whole');
    const cut = new Publisher(c);
    cut.send(...RECORDED.slice(0, 4).map((b, i) => bazelEvent('cut', i + 1, b)));
    await until(() => cut.acks.length === 4, 'four acks');
    // The server goes away with the stream open.
    c.close();
    await server.close();
    expect(
      readFileSync(join(dir, 'bes', 'whole', 'events.bep')).equals(
        readFileSync(new URL('../../core/proto/fixtures/bazel-2.1.0-genrule-build.bep', import.meta.url)),
      ),
    ).toBe(true);
    // A crash mid-append leaves a record cut short: it is left out.
    appendFileSync(join(dir, 'bes', 'cut', 'events.bep'), Buffer.from([0x90, 0x03, 1, 2, 3]));

    server = await start({ path: 'bes', maxInvocations: 3 }, {}, dir);
    c = client(server);
    const statuses = Object.fromEntries(server.buildEvents!.list(EVERYONE).map((s) => [s.invocationId, [s.status, s.eventCount]]));
    expect(statuses).toEqual({ whole: ['succeeded', RECORDED.length], cut: ['partial', 4] });
    expect(server.buildEvents!.get(EVERYONE, 'whole')!.targets.map((t) => t.label)).toEqual(['//:hello', '//:twice']);
    // Retention applies to what was read back too, files included.
    await publishAll(c, 'third');
    await publishAll(c, 'fourth');
    expect(server.buildEvents!.list(EVERYONE).map((s) => s.invocationId)).toEqual(['fourth', 'third', 'cut']);
    expect(readdirSync(join(dir, 'bes')).sort()).toEqual(['cut', 'fourth', 'third']);
  });
});

describe('Build Event Service with auth on', () => {
  let dir: string;
  let server: CacheServer;
  let c: googleBuild.PublishBuildEventClient;
  const issued = { ci: newToken('ci'), dev: newToken('dev'), reader: newToken('reader'), worker: newToken('worker') };
  const tokens = Object.fromEntries(Object.entries(issued).map(([k, v]) => [k, v.token])) as Record<keyof typeof issued, string>;
  const bearer = (token: string) => {
    const m = new grpc.Metadata();
    m.set('authorization', `Bearer ${token}`);
    return m;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kiln-bes-auth-'));
    await writeFile(
      join(dir, 'tokens.txt'),
      `${Object.values(issued)
        .map((t) => t.line)
        .join('\n')}\n`,
    );
    server = await start(
      {},
      {
        instanceNames: ['', 'ci'],
        auth: {
          tokenFile: 'tokens.txt',
          roles: {
            'token:ci': { ci: 'cache-writer' },
            'token:dev': { '': 'executor-client' },
            'token:reader': { '': 'cache-reader' },
            'token:worker': { '*': 'worker' },
          },
        },
      },
      dir,
    );
    c = client(server);
  });

  afterAll(async () => {
    c?.close();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lets writing roles publish on their instance; readers, workers and other instances are PERMISSION_DENIED', async () => {
    expect((await publishAll(c, 'by-ci', 'ci', bearer(tokens.ci))).status?.code).toBe(grpc.status.OK);
    expect((await publishAll(c, 'by-dev', '', bearer(tokens.dev))).status?.code).toBe(grpc.status.OK);
    for (const [token, project] of [
      [tokens.reader, ''],
      [tokens.worker, ''],
      [tokens.dev, 'ci'],
    ] as const) {
      const p = await publishAll(c, `refused-${project}`, project, bearer(token));
      expect(p.status?.code).toBe(grpc.status.PERMISSION_DENIED);
      expect(p.acks).toEqual([]);
    }
    expect((await lifecycle(c, { projectId: '' }, bearer(tokens.reader)))?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await lifecycle(c, { projectId: '' }))?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(
      await lifecycle(c, { projectId: 'ci', buildEvent: { streamId: streamId('lc'), event: { invocationAttemptStarted: {} } } }, bearer(tokens.ci)),
    ).toBeNull();
  });

  it('keeps a stream on the instance it was authorised for', async () => {
    const p = new Publisher(c, bearer(tokens.dev));
    p.send(bazelEvent('switch', 1, RECORDED[0]!, ''), bazelEvent('switch', 2, RECORDED[1]!, 'ci'));
    const status = await p.ended();
    expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(status.details).toContain('project_id');
    expect(p.acks).toEqual([1]);
  });

  it('shows an invocation to those who may read its instance', () => {
    const security = parseCacheServerConfig(
      {
        instanceNames: ['', 'ci'],
        auth: { tokenFile: join(dir, 'tokens.txt'), roles: { 'token:ci': { ci: 'cache-writer' }, 'token:reader': { '': 'cache-reader' } } },
      },
      'c.json',
      dir,
    ).security;
    const ids = (principals: string[]) => server.buildEvents!.list(invocationViewer(security, principals)).map((s) => s.invocationId);
    expect(ids(['token:ci']).sort()).toEqual(['by-ci', 'lc']);
    expect(ids(['token:reader']).sort()).toEqual(['by-dev', 'switch']);
    expect(ids(['token:nobody'])).toEqual([]);
    expect(server.buildEvents!.get(invocationViewer(security, ['token:reader']), 'by-ci')).toBeUndefined();
  });
});
