import type * as grpc from '@grpc/grpc-js';
import { FailedPreconditionError, googleBuild, InvalidArgumentError, type Clock, type wellKnown } from '../../src/core/index.js';
import { toServiceError, withContext } from '../grpc-status.js';
import { quotedName } from '../instance-name.js';
import { reportUnexpected, unaryHandler, type ServiceContext } from '../service-context.js';
import type { BuildEventStore } from './build-event-store.js';
import type { Invocation } from './invocation.js';

/** The type of the Any in OrderedBuildEvent.event.bazel_event that Bazel sends. */
const BAZEL_EVENT_TYPE = 'build_event_stream.BuildEvent';

/**
 * google.devtools.build.v1.PublishBuildEvent, as Bazel's `--bes_backend` speaks it.
 *
 * - PublishLifecycleEvent: the build's and the invocation's lifecycle (BuildEnqueued,
 *   InvocationAttemptStarted, InvocationAttemptFinished, BuildFinished). An invocation attempt's
 *   start makes the invocation known (`running`) before its stream opens; the others are noted.
 * - PublishBuildToolEventStream: one invocation's events, each OrderedBuildEvent acknowledged with its
 *   stream id and sequence number in order, as Bazel expects (it fails the upload on an ack out of
 *   order). A retransmitted event (a number already stored: Bazel resends what it had no ack for on a
 *   new stream) is acknowledged again and not stored twice; a gap is FAILED_PRECONDITION. The BEP
 *   events (`bazel_event`, a build_event_stream.BuildEvent) are stored; component_stream_finished
 *   completes the invocation. A stream that breaks before it leaves the invocation `partial`.
 *
 * `project_id` names the instance (`--bes_instance_name`, formerly `--project_id`; `""` by default), and
 * every request of a stream must name the one its first did, which is the one the authorization
 * interceptor checked.
 */
export function buildEventService(ctx: ServiceContext, store: BuildEventStore, clock: Clock): googleBuild.PublishBuildEventServer {
  const instanceOf = (projectId: string): string => {
    ctx.instances.get(projectId, 'project_id');
    return projectId;
  };
  return {
    PublishLifecycleEvent: unaryHandler(
      ctx,
      'PublishLifecycleEvent',
      () => 0,
      async (request): Promise<wellKnown.EmptyInit> => {
        const instance = instanceOf(request.projectId);
        const ordered = request.buildEvent;
        const event = ordered?.event;
        const invocationId = ordered?.streamId?.invocationId ?? '';
        if (!event || invocationId === '') return {};
        if (event.invocationAttemptStarted) {
          store.open(invocationId, ordered!.streamId!.buildId, instance, clock.now());
        } else if (event.invocationAttemptFinished) {
          const invocation = store.get(invocationId);
          if (invocation && invocation.instance === instance) {
            const result = event.invocationAttemptFinished.invocationStatus?.result ?? googleBuild.BuildStatus_Result.UNKNOWN_STATUS;
            store.attemptFinished(invocation, googleBuild.BuildStatus_Result[result] ?? String(result));
          }
        }
        return {};
      },
    ),

    PublishBuildToolEventStream: (call) => new ToolEventStream(ctx, store, clock, call, instanceOf).start(),
  };
}

type ToolCall = grpc.ServerDuplexStream<googleBuild.PublishBuildToolEventStreamRequest, googleBuild.PublishBuildToolEventStreamResponseInit>;

/** One PublishBuildToolEventStream call: its messages handled one at a time, in order. */
class ToolEventStream {
  private invocation?: Invocation;
  private projectId?: string;
  private finished = false;
  private closed = false;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly store: BuildEventStore,
    private readonly clock: Clock,
    private readonly call: ToolCall,
    private readonly instanceOf: (projectId: string) => string,
  ) {}

  start(): void {
    this.call.on('data', (request: googleBuild.PublishBuildToolEventStreamRequest) => {
      if (this.closed) return;
      try {
        this.handle(request);
      } catch (e) {
        this.fail(e);
      }
    });
    this.call.on('end', () => {
      if (this.closed) return;
      this.close();
      this.call.end();
    });
    this.call.on('cancelled', () => this.close());
    this.call.on('error', () => this.close());
  }

  private handle(request: googleBuild.PublishBuildToolEventStreamRequest): void {
    if (this.projectId === undefined) this.projectId = request.projectId;
    else if (request.projectId !== this.projectId) {
      throw new InvalidArgumentError(`project_id ${quotedName(request.projectId)} differs from the stream's first, ${quotedName(this.projectId)}`);
    }
    const ordered = request.orderedBuildEvent;
    const streamId = ordered?.streamId;
    if (!ordered || !streamId) throw new InvalidArgumentError('ordered_build_event.stream_id is required');
    if (!this.invocation) {
      const instance = this.instanceOf(request.projectId);
      this.invocation = this.store.open(streamId.invocationId, streamId.buildId, instance, this.clock.now());
      this.store.streamOpened(this.invocation);
    } else if (streamId.invocationId !== this.invocation.id) {
      throw new InvalidArgumentError(
        `stream_id.invocation_id ${quotedName(streamId.invocationId)} differs from the stream's first, ${quotedName(this.invocation.id)}`,
      );
    }
    const invocation = this.invocation;
    const sequence = ordered.sequenceNumber;
    if (sequence > invocation.nextSequence) {
      throw new FailedPreconditionError(
        `sequence_number ${sequence} of invocation ${quotedName(invocation.id)}: expected ${invocation.nextSequence} (or a retransmitted lower one)`,
      );
    }
    if (sequence < 1) throw new InvalidArgumentError(`sequence_number must be at least 1, got ${sequence}`);
    if (sequence === invocation.nextSequence) {
      const event = ordered.event;
      const bazelEvent = event?.bazelEvent;
      if (bazelEvent) {
        const url = bazelEvent.typeUrl;
        if (url.slice(url.lastIndexOf('/') + 1) !== BAZEL_EVENT_TYPE) {
          throw new InvalidArgumentError(`bazel_event holds ${quotedName(url)}, not a ${BAZEL_EVENT_TYPE}`);
        }
        this.store.append(invocation, bazelEvent.value);
      }
      invocation.nextSequence++;
      if (event?.componentStreamFinished) this.finished = true;
    } else if (ordered.event?.componentStreamFinished) {
      // A retransmitted component_stream_finished (its first ack was lost) still finishes this stream.
      this.finished = true;
    }
    this.call.write({ streamId: { buildId: streamId.buildId, invocationId: streamId.invocationId, component: streamId.component }, sequenceNumber: sequence });
  }

  /** Ends the call with the status of `e`; the invocation is `partial` unless it had finished. */
  private fail(e: unknown): void {
    const error = reportUnexpected(this.ctx, 'PublishBuildToolEventStream', withContext(e, 'PublishBuildToolEventStream'));
    this.close();
    if (!this.call.cancelled) this.call.emit('error', toServiceError(error));
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.invocation) this.store.streamClosed(this.invocation, this.finished);
  }
}
