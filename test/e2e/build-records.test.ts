import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildEventStream, delimitedMessages, spawnLog, zstdDecompressBounded } from '../../src/core/index.js';
import { E2eWorkspace } from './e2e-workspace.js';

// The build's own records as present-day Bazel writes them: the Build Event Protocol files
// (JSON, binary, text), the JSON trace profile and the execution log, each parsed with the
// vendored upstream definitions (build_event_stream.proto, spawn.proto) or as the trace format,
// and the event stream's shape compared with Bazel 4.2.3's on the same workspace.
const files = {
  WORKSPACE: '',
  'pkg/BUILD': [
    'genrule(name = "gen", outs = ["gen.txt"], cmd = "echo hello > $@")',
    'genrule(name = "fail", outs = ["fail.txt"], cmd = "exit 1")',
    'sh_test(name = "t", srcs = ["t.sh"], data = [":gen"])',
    '',
  ].join('\n'),
  'pkg/t.sh': '#!/bin/sh\necho ok\n',
};

type BuildEvent = buildEventStream.BuildEvent;
type BuildEventId = buildEventStream.BuildEventId;

/** An event id as the shape fixtures name it: its kind and what tells it apart (labels, patterns, attempts), no configuration hashes. */
function idName(id: BuildEventId): string {
  const kind = id.id!;
  const v = (id as unknown as Record<string, Record<string, unknown>>)[kind]!;
  switch (kind) {
    case 'pattern':
      return `pattern ${(v.pattern as string[]).join(' ')}`;
    case 'structuredCommandLine':
      return `structuredCommandLine ${v.commandLineLabel as string}`;
    case 'targetConfigured':
    case 'targetCompleted':
    case 'testSummary':
      return `${kind} ${v.label as string}`;
    case 'testResult':
      return `testResult ${v.label as string} run ${v.run as number} shard ${v.shard as number} attempt ${v.attempt as number}`;
    case 'actionCompleted':
      return `actionCompleted ${v.label as string} ${v.primaryOutput as string}`;
    default:
      return kind;
  }
}

/** The stream's shape: each event (progress events left out) with its payload and the ids it announces, sorted. */
function shapeOf(events: readonly BuildEvent[]): { event: string; payload: string; children: string[] }[] {
  return events
    .filter((e) => e.id!.id !== 'progress')
    .map((e) => ({
      event: idName(e.id!),
      payload: e.payload!,
      children: e.children
        .map(idName)
        .filter((c) => c !== 'progress')
        .sort(),
    }))
    .sort((a, b) => (a.event < b.event ? -1 : a.event > b.event ? 1 : 0));
}

function fixtureShape(name: string): unknown {
  return JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'bazel-4.2.3-records', `${name}.shape.json`), 'utf8'));
}

/** Bazel's streamer's rules: `started` first, every other event announced before it comes, the last one says so, nothing announced is left out. */
function expectWellFormedStream(events: readonly BuildEvent[]): void {
  expect(events[0]!.id!.id).toBe('started');
  const key = (id: BuildEventId) => buildEventStream.BuildEventId.encode(id).toString('base64');
  const announced = new Set<string>();
  const posted = new Set<string>();
  for (const [i, e] of events.entries()) {
    if (i > 0) expect(announced.has(key(e.id!)), `${idName(e.id!)} was announced`).toBe(true);
    expect(posted.has(key(e.id!)), `${idName(e.id!)} posted once`).toBe(false);
    posted.add(key(e.id!));
    for (const c of e.children) announced.add(key(c));
    expect(e.lastMessage).toBe(i === events.length - 1);
  }
  for (const a of announced) expect(posted.has(a)).toBe(true);
}

function readBinaryEvents(path: string): BuildEvent[] {
  return delimitedMessages(readFileSync(path)).map((m) => buildEventStream.BuildEvent.decode(m));
}

/** `--build_event_json_file`: one JSON object per line, read back through the proto's JSON mapping. */
function readJsonEvents(path: string): BuildEvent[] {
  const type = buildEventStream.BuildEvent.type;
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => buildEventStream.BuildEvent.decode(type.encode(type.fromObject(JSON.parse(l) as Record<string, unknown>)).finish()));
}

describe('the build records', () => {
  it('writes the Build Event Protocol of a test command in Bazel shapes, with the profile and the execution log', async () => {
    const ws = new E2eWorkspace(files);
    const out = (name: string) => join(ws.home, name);
    const run = await ws.kiln([
      'test',
      '--spawn_strategy=local',
      `--build_event_json_file=${out('bep.json')}`,
      `--build_event_binary_file=${out('bep.bin')}`,
      `--build_event_text_file=${out('bep.txt')}`,
      `--profile=${out('trace.profile.gz')}`,
      `--execution_log_json_file=${out('exec.json')}`,
      `--execution_log_binary_file=${out('exec.bin')}`,
      `--execution_log_compact_file=${out('exec.compact')}`,
      '//pkg:t',
      '//pkg:gen',
    ]);
    expect(run.code, run.stderr).toBe(0);

    const events = readBinaryEvents(out('bep.bin'));
    expectWellFormedStream(events);
    // The JSON file says the same, event for event.
    const fromJson = readJsonEvents(out('bep.json'));
    expect(fromJson.map((e) => buildEventStream.BuildEvent.encode(e).toString('base64'))).toEqual(
      events.map((e) => buildEventStream.BuildEvent.encode(e).toString('base64')),
    );
    const text = readFileSync(out('bep.txt'), 'utf8');
    expect(text.match(/^event \{$/gm)?.length).toBe(events.length);
    expect(text).toContain('test_summary {\n');

    // Present-day Bazel's buildFinished announces build_metrics too (BuildTool posts BuildCompleteEvent
    // with buildToolLogs and buildMetrics); Bazel 4.2.3's test command announced only build_tool_logs
    // and sent the metrics through a progress event.
    const bazel = fixtureShape('test-t-and-gen') as ReturnType<typeof shapeOf>;
    const finished = bazel.find((e) => e.event === 'buildFinished')!;
    finished.children = ['buildMetrics', 'buildToolLogs'];
    expect(shapeOf(events)).toEqual(bazel);

    const started = events[0]!.started!;
    expect(started.command).toBe('test');
    expect(started.workspaceDirectory).toBe(ws.root);
    const byKind = (payload: string) => events.filter((e) => e.payload === payload);
    const result = byKind('testResult')[0]!.testResult!;
    expect(buildEventStream.TestStatus[result.status]).toBe('PASSED');
    expect(result.testActionOutput.map((f) => f.name)).toEqual(['test.log', 'test.xml']);
    expect(readFileSync(new URL(result.testActionOutput[0]!.uri!), 'utf8')).toContain('ok');
    const summary = byKind('testSummary')[0]!.testSummary!;
    expect([summary.totalRunCount, summary.runCount, summary.attemptCount, summary.shardCount]).toEqual([1, 1, 1, 0]);
    const genCompleted = byKind('completed').find((e) => e.id!.targetCompleted!.label === '//pkg:gen')!;
    const setId = genCompleted.completed!.outputGroup[0]!.fileSets[0]!.id;
    const set = byKind('namedSetOfFiles').find((e) => e.id!.namedSet!.id === setId)!.namedSetOfFiles!;
    expect(set.files.map((f) => [f.name, f.pathPrefix.join('/')])).toEqual([['pkg/gen.txt', 'bazel-out/k8-fastbuild/bin']]);
    expect(readFileSync(new URL(set.files[0]!.uri!), 'utf8')).toBe('hello\n');
    const finishedEvent = byKind('finished')[0]!.finished!;
    expect([finishedEvent.exitCode!.name, finishedEvent.exitCode!.code, finishedEvent.overallSuccess]).toEqual(['SUCCESS', 0, true]);
    expect(byKind('buildToolLogs')[0]!.buildToolLogs!.log.map((l) => l.name)).toEqual(['elapsed time', 'critical path', 'process stats', 'trace.profile.gz']);
    const canonical = byKind('structuredCommandLine').find((e) => e.structuredCommandLine!.commandLineLabel === 'canonical')!;
    const options = canonical.structuredCommandLine!.sections.find((s) => s.sectionLabel === 'command options')!.optionList!.option;
    expect(options.map((o) => o.optionName)).toContain('build_event_json_file');

    // The profile: Chrome's trace event format, one action span per executed spawn, with its mnemonic and target.
    const profile = JSON.parse(gunzipSync(readFileSync(out('trace.profile.gz'))).toString('utf8')) as {
      otherData: Record<string, string>;
      traceEvents: { cat?: string; name: string; ph: string; ts?: number; dur?: number; tid: number; args?: Record<string, string> }[];
    };
    expect(profile.otherData.build_id).toBe(started.uuid);
    const spans = profile.traceEvents.filter((e) => e.cat === 'action processing');
    expect(spans.map((s) => [s.args!.mnemonic, s.args!.target]).sort()).toEqual(
      expect.arrayContaining([
        ['Genrule', '//pkg:gen'],
        ['TestRunner', '//pkg:t'],
      ]),
    );
    for (const s of spans) {
      expect(s.ph).toBe('X');
      expect(s.dur).toBeGreaterThan(0);
      expect(s.ts).toBeGreaterThanOrEqual(0);
    }
    expect(profile.traceEvents.filter((e) => e.cat === 'build phase marker' && e.ph === 'i').map((e) => e.name)).toEqual([
      'Launch Blaze',
      'Initialize command',
      'Load and analyze dependencies',
      'Prepare for build',
      'Build artifacts',
      'Complete build',
    ]);
    const critical = profile.traceEvents.filter((e) => e.cat === 'critical path component');
    expect(critical.at(-1)!.name).toBe("action 'Testing //pkg:t'");

    // The execution log: SpawnExec messages, the same in JSON and binary, sorted producers first.
    const type = spawnLog.SpawnExec.type;
    const jsonSpawns = readFileSync(out('exec.json'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => spawnLog.SpawnExec.decode(type.encode(type.fromObject(JSON.parse(l) as Record<string, unknown>)).finish()));
    const binarySpawns = delimitedMessages(readFileSync(out('exec.bin'))).map((m) => spawnLog.SpawnExec.decode(m));
    expect(jsonSpawns.map((s) => spawnLog.SpawnExec.encode(s).toString('base64'))).toEqual(
      binarySpawns.map((s) => spawnLog.SpawnExec.encode(s).toString('base64')),
    );
    const gen = binarySpawns.find((s) => s.targetLabel === '//pkg:gen')!;
    expect(gen.mnemonic).toBe('Genrule');
    expect(gen.runner).toBe('local');
    expect(gen.listedOutputs).toEqual(['bazel-out/k8-fastbuild/bin/pkg/gen.txt']);
    expect(gen.actualOutputs[0]!.digest!.hash).toBe('5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03');
    expect(gen.actualOutputs[0]!.digest!.hashFunctionName).toBe('SHA-256');
    const test = binarySpawns.find((s) => s.mnemonic === 'TestRunner')!;
    expect(binarySpawns.indexOf(gen)).toBeLessThan(binarySpawns.indexOf(test));
    // The test reads its data through its runfiles tree: the directory is listed file by file, as Bazel lists input directories.
    const data = test.inputs.filter((i) => i.path.endsWith('/pkg/gen.txt'));
    expect(data.map((i) => i.digest?.hash)).toContain(gen.actualOutputs[0]!.digest!.hash);

    // The compact log: zstd, delimited ExecLogEntry messages, each referring only to entries before it.
    const entries = delimitedMessages(zstdDecompressBounded(readFileSync(out('exec.compact')), 1 << 24, 'the compact log')).map((m) =>
      spawnLog.ExecLogEntry.decode(m),
    );
    expect(entries[0]!.invocation).toMatchObject({ hashFunctionName: 'SHA-256', workspaceRunfilesDirectory: '__main__', id: started.uuid });
    const seen = new Map<number, spawnLog.ExecLogEntry>();
    for (const e of entries) {
      for (const ref of [
        ...(e.inputSet?.inputIds ?? []),
        ...(e.spawn?.inputSetId ? [e.spawn.inputSetId] : []),
        ...(e.spawn?.outputs ?? []).map((o) => o.outputId),
      ]) {
        if (ref) expect(seen.has(ref), `entry ${ref} comes before it is used`).toBe(true);
      }
      if (e.id) seen.set(e.id, e);
    }
    const genSpawn = entries.find((e) => e.spawn?.targetLabel === '//pkg:gen')!.spawn!;
    expect([genSpawn.mnemonic, genSpawn.runner, genSpawn.exitCode]).toEqual(['Genrule', 'local', 0]);
    expect(seen.get(genSpawn.outputs[0]!.outputId!)!.file).toMatchObject({
      path: 'bazel-out/k8-fastbuild/bin/pkg/gen.txt',
      digest: { hash: gen.actualOutputs[0]!.digest!.hash },
    });
    expect(entries.filter((e) => e.spawn).length).toBe(binarySpawns.length);
  });

  it('reports a failed action and the target it broke as Bazel 4.2.3 does with --keep_going', async () => {
    const ws = new E2eWorkspace(files);
    const path = join(ws.home, 'bep.bin');
    const run = await ws.kiln(['build', '--spawn_strategy=local', '--keep_going', `--build_event_binary_file=${path}`, '//pkg:gen', '//pkg:fail']);
    expect(run.code).toBe(1);
    const events = readBinaryEvents(path);
    expectWellFormedStream(events);
    expect(shapeOf(events)).toEqual(fixtureShape('build-keep-going-with-failure'));
    const action = events.find((e) => e.payload === 'action')!.action!;
    expect([action.success, action.exitCode, action.type]).toEqual([false, 1, 'Genrule']);
    const finished = events.find((e) => e.payload === 'finished')!.finished!;
    expect([finished.exitCode!.name, finished.exitCode!.code]).toEqual(['BUILD_FAILURE', 1]);
  });

  it('publishes every action with --build_event_publish_all_actions, and writes command.profile.gz by default', async () => {
    const ws = new E2eWorkspace(files);
    const path = join(ws.home, 'bep.json');
    const run = await ws.kiln(['build', '--spawn_strategy=local', '--build_event_publish_all_actions', `--build_event_json_file=${path}`, '//pkg:gen']);
    expect(run.code, run.stderr).toBe(0);
    const events = readJsonEvents(path);
    expectWellFormedStream(events);
    expect(events.filter((e) => e.payload === 'action').map((e) => [e.action!.success, e.action!.type])).toEqual([[true, 'Genrule']]);
    // The same command again, nothing changed (a null build): still every target, completed, with its files.
    const again = await ws.kiln(['build', '--spawn_strategy=local', '--build_event_publish_all_actions', `--build_event_json_file=${path}`, '//pkg:gen']);
    expect(again.code, again.stderr).toBe(0);
    const repeated = readJsonEvents(path);
    expectWellFormedStream(repeated);
    const completed = repeated.find((e) => e.payload === 'completed')!;
    expect([completed.id!.targetCompleted!.label, completed.completed!.success]).toEqual(['//pkg:gen', true]);
    expect(repeated.filter((e) => e.payload === 'aborted')).toEqual([]);
    const info = await ws.kiln(['info', 'output_base']);
    const profile = JSON.parse(gunzipSync(readFileSync(join(info.stdout.trim(), 'command.profile.gz'))).toString('utf8')) as { traceEvents: unknown[] };
    expect(profile.traceEvents.length).toBeGreaterThan(0);
  });

  it('reports each shard, run and attempt of a test as Bazel 4.2.3 does', async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'pkg/BUILD': 'sh_test(name = "sharded", srcs = ["t.sh"], shard_count = 2)\nsh_test(name = "fails", srcs = ["f.sh"])\n',
      'pkg/t.sh': '#!/bin/sh\necho ok\n',
      'pkg/f.sh': '#!/bin/sh\nexit 1\n',
    });
    const path = join(ws.home, 'bep.bin');
    const run = await ws.kiln([
      'test',
      '--spawn_strategy=local',
      '--runs_per_test=2',
      '--flaky_test_attempts=2',
      `--build_event_binary_file=${path}`,
      '//pkg:all',
    ]);
    expect(run.code).toBe(3);
    const events = readBinaryEvents(path);
    expectWellFormedStream(events);
    // Bazel 4.2.3's test command announced build_metrics through a progress event; present-day
    // Bazel's buildFinished announces it (see the first test).
    const bazel = fixtureShape('test-shards-runs-attempts') as ReturnType<typeof shapeOf>;
    bazel.find((e) => e.event === 'buildFinished')!.children = ['buildMetrics', 'buildToolLogs'];
    expect(shapeOf(events)).toEqual(bazel);
    const fails = events.find((e) => e.testSummary && e.id!.testSummary!.label === '//pkg:fails')!.testSummary!;
    expect(buildEventStream.TestStatus[fails.overallStatus]).toBe('FAILED');
    expect([fails.totalRunCount, fails.runCount, fails.attemptCount, fails.shardCount]).toEqual([4, 2, 2, 0]);
    const sharded = events.find((e) => e.testSummary && e.id!.testSummary!.label === '//pkg:sharded')!.testSummary!;
    expect([sharded.totalRunCount, sharded.runCount, sharded.shardCount, sharded.passed.length]).toEqual([4, 2, 2, 4]);
  });

  it('aborts the pattern with LOADING_FAILURE and the error when a target does not exist, as Bazel 4.2.3 does', async () => {
    const ws = new E2eWorkspace(files);
    const path = join(ws.home, 'bep.bin');
    const run = await ws.kiln(['build', `--build_event_binary_file=${path}`, '//pkg:nope']);
    expect(run.code).toBe(1);
    const events = readBinaryEvents(path);
    expectWellFormedStream(events);
    expect(shapeOf(events)).toEqual(fixtureShape('build-no-such-target'));
    const aborted = events.find((e) => e.aborted)!;
    expect(buildEventStream.Aborted_AbortReason[aborted.aborted!.reason]).toBe('LOADING_FAILURE');
    expect(aborted.aborted!.description).toContain("no such target '//pkg:nope'");
  });

  it('refuses a malformed --invocation_id as Bazel does', async () => {
    const ws = new E2eWorkspace(files);
    const run = await ws.kiln(['build', '--invocation_id=not-a-uuid', '//pkg:gen']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("ERROR: While parsing option --invocation_id=not-a-uuid: Value 'not-a-uuid' is not a value UUID.");
  });
});
