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

/**
 * Reads an invocation's events into its report, event by event, so a page that follows a running
 * build (refreshed every second) decodes only the events that came since its last look.
 */
export class InvocationReportBuilder {
  /** Events read so far: the offset to ask the store for next. */
  count = 0;
  private original?: string[];
  private unstructured?: string[];
  private explicitOptions: string[] = [];
  private allOptions: string[] = [];
  private metrics?: buildEventStream.BuildMetrics;
  private readonly tests: TestAttempt[] = [];

  add(e: buildEventStream.BuildEvent): void {
    this.count++;
    if (e.structuredCommandLine?.commandLineLabel === 'original') this.original = flatten(e.structuredCommandLine);
    if (e.unstructuredCommandLine) this.unstructured = e.unstructuredCommandLine.args;
    if (e.optionsParsed) {
      this.explicitOptions = e.optionsParsed.explicitCmdLine;
      this.allOptions = e.optionsParsed.cmdLine;
    }
    if (e.buildMetrics) this.metrics = e.buildMetrics;
    const id = e.id?.testResult;
    const r = e.testResult;
    if (id && r) {
      this.tests.push({
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

  report(): InvocationReport {
    return {
      commandLine: this.original ?? this.unstructured ?? [],
      explicitOptions: this.explicitOptions,
      allOptions: this.allOptions,
      tests: [...this.tests],
      ...(this.metrics ? { metrics: this.metrics } : {}),
    };
  }
}

/** Builders of the invocations pages looked at last, at most `capacity` (the least recently used goes). */
export class InvocationReports {
  private readonly builders = new Map<string, InvocationReportBuilder>();

  constructor(private readonly capacity = 64) {}

  /**
   * The report of `invocationId` given `newEvents(offset)`, the store's events from an offset. An
   * invocation the store dropped and a new one of the same id start over (fewer events than read).
   */
  reportOf(invocationId: string, eventCount: number, newEvents: (offset: number) => readonly buildEventStream.BuildEvent[]): InvocationReport {
    let builder = this.builders.get(invocationId);
    if (!builder || builder.count > eventCount) builder = new InvocationReportBuilder();
    this.builders.delete(invocationId);
    this.builders.set(invocationId, builder);
    while (this.builders.size > this.capacity) this.builders.delete(this.builders.keys().next().value as string);
    for (const event of newEvents(builder.count)) builder.add(event);
    return builder.report();
  }
}

export function invocationReport(events: readonly buildEventStream.BuildEvent[]): InvocationReport {
  const builder = new InvocationReportBuilder();
  for (const e of events) builder.add(e);
  return builder.report();
}

/** `bytestream://HOST:PORT/[INSTANCE/]blobs/HASH/SIZE`: the blob Bazel uploaded a file as. */
export function bytestreamBlob(uri: string): { instanceName: string; hash: string; sizeBytes: number } | undefined {
  const m = /^bytestream:\/\/[^/]+\/(?:(.*)\/)?blobs\/([0-9a-f]{64})\/(\d{1,15})$/.exec(uri);
  if (!m) return undefined;
  return { instanceName: m[1] ?? '', hash: m[2]!, sizeBytes: Number(m[3]) };
}
