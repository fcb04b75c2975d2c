import { readFileSync } from 'node:fs';
import type protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { buildEventStream, googleBuild } from '../../../src/core/proto.js';
import { protoRoot } from '../../../proto/gen/runtime.js';
import { delimitedMessages } from '../../../src/core/delimited-messages.js';

/**
 * The Build Event Protocol protos (proto/bazel/, Bazel's build_event_stream and what it imports) and
 * the Build Event Service's (google.devtools.build.v1 from google-proto-files) against upstream.
 *
 * fixtures/bep-upstream-wire-table.json lists every message field (name, number, label, type), enum
 * value and RPC of the upstream files it names; it was produced from their .proto text, which is not
 * available in CI. fixtures/bazel-2.1.0-genrule-build.bep is what Bazel 2.1.0 wrote with
 * `--build_event_binary_file` for `bazel build //...` of a workspace with two genrules (`hello`, and
 * `twice` using it): varint-delimited build_event_stream.BuildEvent messages.
 */
interface WireTable {
  messages: Record<string, [string, number, string, string][]>;
  enums: Record<string, [string, number][]>;
  services: Record<string, [string, string, boolean, string, boolean][]>;
}
const table = JSON.parse(readFileSync(new URL('./fixtures/bep-upstream-wire-table.json', import.meta.url), 'utf8')) as WireTable;
const root = protoRoot();

const jsonName = (name: string): string => name.replace(/_+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''));
const labelOf = (f: protobuf.Field): string => (f.map ? `map<${(f as unknown as protobuf.MapField).keyType}>` : f.repeated ? 'repeated' : 'singular');
const typeOf = (f: protobuf.Field): string => (f.resolvedType ? f.resolvedType.fullName.slice(1) : f.type);

describe('Build Event Protocol and Build Event Service protos against the upstream wire table', () => {
  it('covers every package of the upstream files', () => {
    const packages = new Set(
      [...Object.keys(table.messages), ...Object.keys(table.enums)].map((n) =>
        n
          .split('.')
          .filter((p) => /^[a-z]/.test(p))
          .join('.'),
      ),
    );
    expect([...packages].sort()).toEqual([
      'blaze',
      'blaze.invocation_policy',
      'blaze.strategy_policy',
      'build_event_stream',
      'command_line',
      'devtools.build.lib.packages.metrics',
      'failure_details',
      'google.devtools.build.v1',
      'options',
    ]);
    expect(Object.keys(table.messages).length).toBeGreaterThan(180);
  });

  it.each(Object.entries(table.messages))('%s has the upstream fields', (name, fields) => {
    const type = root.lookupType(name);
    const ours = type.fieldsArray.map((f) => [f.name, f.id, labelOf(f), typeOf(f)]).sort((a, b) => Number(a[1]) - Number(b[1]));
    const upstream = fields.map(([n, id, label, t]) => [jsonName(n), id, label, t]).sort((a, b) => Number(a[1]) - Number(b[1]));
    expect(ours).toEqual(upstream);
  });

  it.each(Object.entries(table.enums))('%s has the upstream values', (name, values) => {
    expect(Object.entries(root.lookupEnum(name).values)).toEqual(values);
  });

  it('PublishBuildEvent has the upstream RPCs and grpc-js paths', () => {
    const methods = table.services['google.devtools.build.v1.PublishBuildEvent']!;
    const service = root.lookupService('google.devtools.build.v1.PublishBuildEvent');
    expect(
      service.methodsArray.map((m) => [
        m.name,
        m.resolvedRequestType!.fullName.slice(1),
        !!m.requestStream,
        m.resolvedResponseType!.fullName.slice(1),
        !!m.responseStream,
      ]),
    ).toEqual(methods);
    expect(googleBuild.PublishBuildEventService.PublishBuildToolEventStream).toMatchObject({
      path: '/google.devtools.build.v1.PublishBuildEvent/PublishBuildToolEventStream',
      requestStream: true,
      responseStream: true,
    });
    expect(googleBuild.PublishBuildEventService.PublishLifecycleEvent).toMatchObject({ requestStream: false, responseStream: false });
  });
});

describe("a real Bazel 2.1.0 build's event stream", () => {
  const raw = delimitedMessages(readFileSync(new URL('./fixtures/bazel-2.1.0-genrule-build.bep', import.meta.url)));
  const events = raw.map((bytes) => buildEventStream.BuildEvent.decode(bytes));

  it('decodes whole, and every event encodes back to the bytes Bazel wrote', () => {
    expect(events.length).toBeGreaterThan(20);
    raw.forEach((bytes, i) => expect(buildEventStream.BuildEvent.encode(events[i]!).equals(bytes), `event ${i}`).toBe(true));
  });

  it('starts with BuildStarted: the command, its uuid and the tool version', () => {
    const first = events[0]!;
    expect(first.id?.started).toBeDefined();
    expect(first.started).toMatchObject({ command: 'build', buildToolVersion: '2.1.0' });
    expect(first.started!.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.started!.startTimeMillis).toBeGreaterThan(1_500_000_000_000);
    // Announced children include the command lines, the options and the pattern.
    expect(first.children.some((c) => c.pattern?.pattern.includes('//...'))).toBe(true);
    expect(first.children.some((c) => c.structuredCommandLine?.commandLineLabel === 'canonical')).toBe(true);
  });

  it('has the expanded pattern, the configured and the completed targets', () => {
    const expanded = events.find((e) => e.id?.pattern)!;
    expect(expanded.id!.pattern!.pattern).toEqual(['//...']);
    expect(expanded.children.map((c) => c.targetConfigured?.label)).toEqual(['//:hello', '//:twice']);
    const configured = events.filter((e) => e.configured);
    expect(configured.map((e) => [e.id!.targetConfigured!.label, e.configured!.targetKind])).toEqual([
      ['//:hello', 'genrule rule'],
      ['//:twice', 'genrule rule'],
    ]);
    const completed = events.filter((e) => e.id?.targetCompleted);
    expect(completed.map((e) => [e.id!.targetCompleted!.label, e.completed!.success])).toEqual([
      ['//:hello', true],
      ['//:twice', true],
    ]);
    const sets = events.filter((e) => e.namedSetOfFiles).flatMap((e) => e.namedSetOfFiles!.files.map((f) => f.name));
    expect(sets).toEqual(['hello.txt', 'twice.txt']);
  });

  it('has the command line, the workspace status and the configuration', () => {
    const canonical = events.find((e) => e.structuredCommandLine?.commandLineLabel === 'canonical')!.structuredCommandLine!;
    expect(canonical.sections.map((s) => s.sectionLabel)).toContain('command options');
    expect(events.find((e) => e.unstructuredCommandLine)!.unstructuredCommandLine!.args[0]).toBe('build');
    const status = new Map(events.find((e) => e.workspaceStatus)!.workspaceStatus!.item.map((i) => [i.key, i.value]));
    expect([...status.keys()]).toEqual(expect.arrayContaining(['BUILD_USER', 'BUILD_HOST']));
    expect(events.find((e) => e.configuration)!.configuration).toMatchObject({ mnemonic: 'k8-fastbuild', cpu: 'k8' });
  });

  it('ends with BuildFinished (success), the metrics and the last message', () => {
    const finished = events.find((e) => e.finished)!.finished!;
    expect(finished.overallSuccess).toBe(true);
    expect(finished.exitCode).toMatchObject({ name: 'SUCCESS', code: 0 });
    const metrics = events.find((e) => e.buildMetrics)!.buildMetrics!;
    expect(metrics.actionSummary?.actionsCreated).toBe(2);
    expect(metrics.packageMetrics?.packagesLoaded).toBeGreaterThan(0);
    expect(events.at(-1)!.lastMessage).toBe(true);
    expect(events.filter((e) => e.lastMessage)).toHaveLength(1);
  });

  it('travels in a Build Event Service OrderedBuildEvent as an Any, as --bes_backend sends it', () => {
    const request = googleBuild.PublishBuildToolEventStreamRequest.encode({
      orderedBuildEvent: {
        streamId: { buildId: 'b', invocationId: events[0]!.started!.uuid, component: googleBuild.StreamId_BuildComponent.TOOL },
        sequenceNumber: 1,
        event: { bazelEvent: { typeUrl: 'type.googleapis.com/build_event_stream.BuildEvent', value: raw[0]! } },
      },
      projectId: 'ci',
    });
    const decoded = googleBuild.PublishBuildToolEventStreamRequest.decode(request);
    expect(decoded.orderedBuildEvent!.sequenceNumber).toBe(1);
    expect(decoded.projectId).toBe('ci');
    const inner = buildEventStream.BuildEvent.decode(decoded.orderedBuildEvent!.event!.bazelEvent!.value);
    expect(inner.started!.command).toBe('build');
  });
});

describe("a real Bazel 4.2.3 test run's event stream", () => {
  // fixtures/bazel-4.2.3-sh-test.bep: `bazel test //...` (../shared/reference-bazel/bazel4) of a genrule
  // and two sh_tests, `passes` and `fails`, written with --build_event_binary_file.
  const raw = delimitedMessages(readFileSync(new URL('./fixtures/bazel-4.2.3-sh-test.bep', import.meta.url)));
  const events = raw.map((bytes) => buildEventStream.BuildEvent.decode(bytes));

  it('decodes whole, and every event encodes back to the bytes Bazel wrote', () => {
    raw.forEach((bytes, i) => expect(buildEventStream.BuildEvent.encode(events[i]!).equals(bytes), `event ${i}`).toBe(true));
    expect(events[0]!.started?.command).toBe('test');
  });

  it('has each test result with its log, the test summaries and the exit code', () => {
    const results = events.filter((e) => e.testResult).map((e) => [e.id!.testResult!.label, buildEventStream.TestStatus[e.testResult!.status]]);
    expect(results.sort()).toEqual([
      ['//:fails', 'FAILED'],
      ['//:passes', 'PASSED'],
    ]);
    const failed = events.find((e) => e.id?.testResult?.label === '//:fails')!.testResult!;
    expect(failed.testActionOutput.map((f) => f.name)).toContain('test.log');
    const summaries = events.filter((e) => e.testSummary).map((e) => [e.id!.testSummary!.label, buildEventStream.TestStatus[e.testSummary!.overallStatus]]);
    expect(summaries.sort()).toEqual([
      ['//:fails', 'FAILED'],
      ['//:passes', 'PASSED'],
    ]);
    expect(events.find((e) => e.finished)!.finished!.exitCode).toMatchObject({ name: 'TESTS_FAILED', code: 3 });
  });
});
