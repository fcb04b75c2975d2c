import * as grpc from '@grpc/grpc-js';
import { googleBuild } from '../core/index.js';
import { remoteCallError } from './remote-call-error.js';
import { channelCredentials } from './remote-channel.js';
import type { RemoteEndpoint } from './remote-endpoint.js';
import type { TlsFiles } from './remote-tls.js';

type ToolStream = grpc.ClientDuplexStream<googleBuild.PublishBuildToolEventStreamRequestInit, googleBuild.PublishBuildToolEventStreamResponse>;

/**
 * A client of google.devtools.build.v1.PublishBuildEvent (Bazel's `--bes_backend`), over the same
 * channel credentials as Kiln's REAPI client (`--tls_certificate` and the client certificate),
 * with the `--bes_header`s on every call.
 */
export class BuildEventServiceClient {
  private readonly client: googleBuild.PublishBuildEventClient;

  constructor(
    readonly endpoint: RemoteEndpoint,
    private readonly headers: readonly (readonly [string, string])[],
    tls: TlsFiles = {},
  ) {
    const Ctor = grpc.makeGenericClientConstructor(googleBuild.PublishBuildEventService as unknown as grpc.ServiceDefinition, 'PublishBuildEvent');
    this.client = new Ctor(endpoint.target, channelCredentials(endpoint, tls), { 'grpc.enable_retries': 0 }) as unknown as googleBuild.PublishBuildEventClient;
  }

  /** PublishLifecycleEvent with a deadline `timeoutMs` from now (none when 0); a failure is a RemoteCallError. */
  publishLifecycleEvent(request: googleBuild.PublishLifecycleEventRequestInit, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const options = timeoutMs > 0 ? { deadline: Date.now() + timeoutMs } : {};
      this.client.PublishLifecycleEvent(request, this.metadata(), options, (err) => {
        if (err) reject(remoteCallError(err, 'PublishLifecycleEvent'));
        else resolve();
      });
    });
  }

  /** Opens PublishBuildToolEventStream (a deadline `timeoutMs` from now, none when 0). */
  openToolEventStream(timeoutMs: number): ToolStream {
    return this.client.PublishBuildToolEventStream(this.metadata(), timeoutMs > 0 ? { deadline: Date.now() + timeoutMs } : {});
  }

  close(): void {
    this.client.close();
  }

  private metadata(): grpc.Metadata {
    const metadata = new grpc.Metadata();
    for (const [name, value] of this.headers) metadata.add(name, value);
    return metadata;
  }
}
