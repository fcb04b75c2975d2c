import { buildEventStream, googleBuild, packAny, timestampFromMs } from '../../core/index.js';
import { resolve } from 'node:path';
import type { BuildOptions } from '../../analysis/index.js';
import { UsageError } from '../../core/index.js';
import { BuildEventServiceClient, parseRemoteEndpoint, parseRemoteHeader, remoteCallError } from '../../remote/index.js';
import type { BuildEventTransport } from './build-event-stream.js';

type StreamRequest = googleBuild.PublishBuildToolEventStreamRequestInit;

/** The ids a Build Event Service files an invocation under (`--build_request_id`, `--invocation_id`) and its instance (`--bes_instance_name`). */
export interface BesStreamIds {
  readonly buildId: string;
  readonly invocationId: string;
  readonly projectId: string;
}

/** Why the upload failed, and whether Bazel counts it transient (exit 38) or persistent (exit 45). */
export interface BesUploadFailure {
  readonly message: string;
  readonly transient: boolean;
  /** `--bes_timeout` ran out (Bazel then says `The Build Event Protocol upload timed out.`). */
  readonly timedOut?: boolean;
}

/** gRPC codes a retry could get past: Bazel's transient BES upload errors. */
const TRANSIENT_CODES = new Set(['UNAVAILABLE', 'DEADLINE_EXCEEDED', 'RESOURCE_EXHAUSTED', 'ABORTED', 'INTERNAL', 'UNKNOWN', 'CANCELLED']);

/**
 * The Build Event Protocol stream sent to a Build Event Service (`--bes_backend`) as Bazel's
 * BuildEventServiceTransport sends it: with `--bes_lifecycle_events`, BuildEnqueued and
 * InvocationAttemptStarted first; then one PublishBuildToolEventStream call carrying each event as
 * an OrderedBuildEvent (sequence numbers from 1, `bazel_event` an Any of the BuildEvent), closed by
 * component_stream_finished; once every event is acknowledged, InvocationAttemptFinished and
 * BuildFinished with the command's result. A failure never throws: it is kept for `failure`, and
 * the rest of the upload is skipped (the build goes on).
 */
export class BuildEventServiceTransport implements BuildEventTransport {
  private sequence = 0;
  private acked = 0;
  private error: BesUploadFailure | undefined;
  private readonly ready: Promise<void>;
  /** Every request not acknowledged yet, in order: what a new stream sends again after a break. */
  private readonly unacked: StreamRequest[] = [];
  private stream: ReturnType<BuildEventServiceClient['openToolEventStream']> | undefined;
  private closing = false;
  private retries = 0;
  private settle: (() => void) | undefined;
  private readonly settled: Promise<void>;

  constructor(
    private readonly client: BuildEventServiceClient,
    private readonly ids: BesStreamIds,
    private readonly options: {
      readonly lifecycleEvents: boolean;
      readonly timeoutMs: number;
      /** `--experimental_build_event_upload_max_retries`: new streams after transient failures. */
      readonly maxRetries: number;
      /** `--experimental_build_event_upload_retry_minimum_delay`: the first wait, doubled for each retry. */
      readonly retryDelayMs: number;
    },
  ) {
    this.settled = new Promise((resolve) => (this.settle = resolve));
    this.ready = (options.lifecycleEvents ? this.lifecycleStart() : Promise.resolve()).then(
      () => this.openStream(),
      (e: unknown) => this.fail(e),
    );
  }

  /** The upload's failure, once `close` has resolved; undefined when every event was acknowledged. */
  get failure(): BesUploadFailure | undefined {
    return this.error;
  }

  write(event: buildEventStream.BuildEventInit): void {
    if (this.error || this.closing) return;
    this.send({ bazelEvent: packAny(buildEventStream.BuildEvent, event) });
  }

  async close(exitCode = 0): Promise<void> {
    await this.ready;
    if (!this.error) {
      this.send({ componentStreamFinished: { type: googleBuild.BuildEvent_BuildComponentStreamFinished_FinishType.FINISHED } });
      this.closing = true;
      this.stream?.end();
      // --bes_timeout bounds the wait after the build (0: none), as Bazel's does; the stream itself has no deadline.
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        if (this.options.timeoutMs > 0) timer = setTimeout(() => resolve('timeout'), this.options.timeoutMs);
      });
      if ((await Promise.race([this.settled, timedOut])) === 'timeout') {
        this.error ??= { message: 'timed out', transient: true, timedOut: true };
        this.stream?.cancel();
      }
      clearTimeout(timer);
      if (!this.error && this.options.lifecycleEvents) await this.lifecycleFinish(exitCode).catch((e: unknown) => this.fail(e));
    }
    this.client.close();
  }

  private send(event: googleBuild.BuildEventInit): void {
    const request: StreamRequest = {
      orderedBuildEvent: {
        streamId: this.streamId(googleBuild.StreamId_BuildComponent.TOOL),
        sequenceNumber: ++this.sequence,
        event: { eventTime: timestampFromMs(Date.now()), ...event },
      },
      projectId: this.ids.projectId,
    };
    this.unacked.push(request);
    this.stream?.write(request);
  }

  /** A PublishBuildToolEventStream call that sends every unacknowledged event, then what comes. */
  private openStream(): void {
    if (this.error) return;
    const stream = this.client.openToolEventStream(0);
    let broken = false;
    stream.on('data', (response: googleBuild.PublishBuildToolEventStreamResponse) => {
      this.acked = Math.max(this.acked, response.sequenceNumber);
      while (this.unacked.length > 0 && this.unacked[0]!.orderedBuildEvent!.sequenceNumber! <= this.acked) this.unacked.shift();
    });
    stream.on('error', (e: unknown) => {
      broken = true;
      this.broke(stream, e);
    });
    stream.on('end', () => {
      if (broken) return;
      if (this.closing && this.acked >= this.sequence) this.settle?.();
      else this.broke(stream, new Error(`the Build Event Service closed the stream with ${this.acked} of ${this.sequence} events acknowledged`));
    });
    this.stream = stream;
    for (const request of this.unacked) stream.write(request);
    if (this.closing) stream.end();
  }

  /** A stream broke: a transient failure opens a new one after a wait, while retries are left (Bazel's BES retries); else the upload fails. */
  private broke(stream: ReturnType<BuildEventServiceClient['openToolEventStream']>, e: unknown): void {
    if (this.stream !== stream || this.error) return;
    this.stream = undefined;
    const failure = failureOf(e);
    if (!failure.transient || this.retries >= this.options.maxRetries) {
      this.error = this.retries > 0 ? { ...failure, message: `All ${this.retries} retry attempts failed. ${failure.message}` } : failure;
      this.settle?.();
      return;
    }
    const delay = this.options.retryDelayMs * 2 ** this.retries;
    this.retries++;
    setTimeout(() => this.openStream(), delay);
  }

  private async lifecycleStart(): Promise<void> {
    await this.lifecycle(1, { buildEnqueued: {} }, googleBuild.StreamId_BuildComponent.CONTROLLER, false);
    await this.lifecycle(1, { invocationAttemptStarted: { attemptNumber: 1 } }, googleBuild.StreamId_BuildComponent.CONTROLLER, true);
  }

  private async lifecycleFinish(exitCode: number): Promise<void> {
    const status = { result: resultOf(exitCode) };
    await this.lifecycle(2, { invocationAttemptFinished: { invocationStatus: status } }, googleBuild.StreamId_BuildComponent.CONTROLLER, true);
    await this.lifecycle(2, { buildFinished: { status } }, googleBuild.StreamId_BuildComponent.CONTROLLER, false);
  }

  /** One lifecycle event, tried again after transient failures as the stream is; build-level ones name only the build. */
  private async lifecycle(sequenceNumber: number, event: googleBuild.BuildEventInit, component: googleBuild.StreamId_BuildComponent, invocationLevel: boolean) {
    const streamId = invocationLevel ? this.streamId(component) : { buildId: this.ids.buildId, component };
    const request = {
      serviceLevel: googleBuild.PublishLifecycleEventRequest_ServiceLevel.INTERACTIVE,
      buildEvent: { streamId, sequenceNumber, event: { eventTime: timestampFromMs(Date.now()), ...event } },
      projectId: this.ids.projectId,
    };
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.client.publishLifecycleEvent(request, this.options.timeoutMs);
      } catch (e) {
        if (!failureOf(e).transient || attempt >= this.options.maxRetries) throw e;
        await new Promise((resolve) => setTimeout(resolve, this.options.retryDelayMs * 2 ** attempt));
      }
    }
  }

  private streamId(component: googleBuild.StreamId_BuildComponent): googleBuild.StreamIdInit {
    return { buildId: this.ids.buildId, invocationId: this.ids.invocationId, component };
  }

  private fail(e: unknown): void {
    if (this.error) return;
    this.error = failureOf(e);
    this.settle?.();
  }
}

/** A failure in Bazel's words (`UNAVAILABLE: ...`, naming the status, not the method) and whether a retry could get past it. */
function failureOf(e: unknown): BesUploadFailure {
  const error = remoteCallError(e, 'PublishBuildToolEventStream');
  const message = error.message.replace(/^(PublishBuildToolEventStream|PublishLifecycleEvent): /, '');
  return { message, transient: TRANSIENT_CODES.has(error.codeName) };
}

/** The invocation's result as the Build Event Service's BuildStatus says it. */
function resultOf(exitCode: number): googleBuild.BuildStatus_Result {
  const R = googleBuild.BuildStatus_Result;
  switch (exitCode) {
    case 0:
      return R.COMMAND_SUCCEEDED;
    case 2:
      return R.USER_ERROR;
    case 8:
      return R.CANCELLED;
    case 37:
      return R.SYSTEM_ERROR;
    default:
      return R.COMMAND_FAILED;
  }
}

/** `--bes_backend` (with `--bes_header`, `--bes_instance_name`, `--bes_timeout`, `--bes_lifecycle_events` and the TLS flags); throws UsageError. */
export function openBuildEventServiceTransport(
  options: BuildOptions,
  cwd: string,
  ids: { readonly invocationId: string; readonly buildRequestId: string },
): BuildEventServiceTransport {
  const endpoint = parseRemoteEndpoint(options.getString('bes_backend'), '--bes_backend');
  const headers = options.getList('bes_header').map((h) => {
    const parsed = parseRemoteHeader(h, '--bes_header');
    if (typeof parsed === 'string') throw new UsageError(parsed);
    return parsed;
  });
  const path = (name: string) => (options.getString(name) === '' ? undefined : resolve(cwd, options.getString(name)));
  const certificate = path('tls_certificate');
  const clientCertificate = path('tls_client_certificate');
  const clientKey = path('tls_client_key');
  const client = new BuildEventServiceClient(endpoint, headers, {
    ...(certificate ? { certificate } : {}),
    ...(clientCertificate ? { clientCertificate } : {}),
    ...(clientKey ? { clientKey } : {}),
  });
  return new BuildEventServiceTransport(
    client,
    { buildId: ids.buildRequestId, invocationId: ids.invocationId, projectId: options.getString('bes_instance_name') },
    {
      lifecycleEvents: options.getBool('bes_lifecycle_events'),
      timeoutMs: options.getDurationMs('bes_timeout'),
      maxRetries: options.getInt('experimental_build_event_upload_max_retries'),
      retryDelayMs: options.getDurationMs('experimental_build_event_upload_retry_minimum_delay'),
    },
  );
}
