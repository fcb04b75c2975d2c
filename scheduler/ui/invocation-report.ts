import { buildEventStream, msFromDuration } from '../../src/core/index.js';

/** One test attempt of an invocation (a TestResult event). */
export interface TestAttempt {
  readonly label: string;
  readonly run: number;
  readonly shard: number;
  readonly attempt: number;
  readonly status: string;
  readonly durationMs: number;
  readonly cachedLocally: boolean;
  readonly strategy: string;
  /** test.log, test.xml, ...: their URIs (`bytestream://HOST/blobs/HASH/SIZE` once uploaded, else `file://`). */
  readonly outputs: readonly { readonly name: string; readonly uri: string }[];
}

/** What the invocation page reads from the BEP events beyond the store's summary. */
export interface InvocationReport {
  /** The command line as typed (the `original` structured command line, else the unstructured one). */
  readonly commandLine: readonly string[];
  /** The options given explicitly (OptionsParsed.explicit_cmd_line) and all of them as parsed. */
  readonly explicitOptions: readonly string[];
  readonly allOptions: readonly string[];
  readonly tests: readonly TestAttempt[];
  readonly metrics?: buildEventStream.BuildMetrics;
}

/** A client's duration, never an exception: 0 when it is not representable. */
function durationMs(r: buildEventStream.TestResult): number {
  try {
    return r.testAttemptDuration ? msFromDuration(r.testAttemptDuration) : r.testAttemptDurationMillis;
  } catch {
    return 0;
  }
}

function flatten(line: buildEventStream.BuildEvent['structuredCommandLine']): string[] {
  const out: string[] = [];
  for (const section of line?.sections ?? []) {
    if (section.chunkList) out.push(...section.chunkList.chunk);
    if (section.optionList) out.push(...section.optionList.option.map((o) => o.combinedForm));
  }
  return out;
}

export function invocationReport(events: readonly buildEventStream.BuildEvent[]): InvocationReport {
  let original: string[] | undefined;
  let unstructured: string[] | undefined;
  let explicitOptions: string[] = [];
  let allOptions: string[] = [];
  let metrics: buildEventStream.BuildMetrics | undefined;
  const tests: TestAttempt[] = [];
  for (const e of events) {
    if (e.structuredCommandLine?.commandLineLabel === 'original') original = flatten(e.structuredCommandLine);
    if (e.unstructuredCommandLine) unstructured = e.unstructuredCommandLine.args;
    if (e.optionsParsed) {
      explicitOptions = e.optionsParsed.explicitCmdLine;
      allOptions = e.optionsParsed.cmdLine;
    }
    if (e.buildMetrics) metrics = e.buildMetrics;
    const id = e.id?.testResult;
    const r = e.testResult;
    if (id && r) {
      tests.push({
        label: id.label,
        run: id.run,
        shard: id.shard,
        attempt: id.attempt,
        status: buildEventStream.TestStatus[r.status] ?? String(r.status),
        durationMs: durationMs(r),
        cachedLocally: r.cachedLocally,
        strategy: r.executionInfo?.strategy ?? '',
        outputs: r.testActionOutput.map((f) => ({ name: f.name, uri: f.uri ?? '' })),
      });
    }
  }
  return { commandLine: original ?? unstructured ?? [], explicitOptions, allOptions, tests, ...(metrics ? { metrics } : {}) };
}

/** `bytestream://HOST:PORT/[INSTANCE/]blobs/HASH/SIZE`: the blob Bazel uploaded a file as. */
export function bytestreamBlob(uri: string): { instanceName: string; hash: string; sizeBytes: number } | undefined {
  const m = /^bytestream:\/\/[^/]+\/(?:(.*)\/)?blobs\/([0-9a-f]{64})\/(\d{1,15})$/.exec(uri);
  if (!m) return undefined;
  return { instanceName: m[1] ?? '', hash: m[2]!, sizeBytes: Number(m[3]) };
}
