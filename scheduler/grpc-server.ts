import * as grpc from '@grpc/grpc-js';

/** One gRPC service to put on the server's port: its definition and its handlers. */
export interface ServiceRegistration {
  /** Full proto name, for logs, e.g. `build.bazel.remote.execution.v2.ContentAddressableStorage`. */
  readonly name: string;
  readonly definition: grpc.ServiceDefinition;
  readonly implementation: grpc.UntypedServiceImplementation;
}

interface RunningGrpcServer {
  readonly host: string;
  readonly port: number;
  /** Stops accepting calls, waits a grace period for running ones, then cancels the rest. */
  stop(graceMs?: number): Promise<void>;
}

/** Largest message either direction: batches up to max_batch_total_size_bytes plus framing. */
export function grpcServerOptions(maxBatchBytes: number): grpc.ServerOptions {
  const maxMessage = Math.max(8 * 1024 * 1024, maxBatchBytes + 1024 * 1024);
  return {
    'grpc.max_receive_message_length': maxMessage,
    'grpc.max_send_message_length': maxMessage,
  };
}

/** Starts a server with every registration on one port (0 = ephemeral), plain unless `credentials` say TLS. */
export async function startGrpcServer(
  host: string,
  port: number,
  services: readonly ServiceRegistration[],
  options: grpc.ServerOptions = {},
  credentials: grpc.ServerCredentials = grpc.ServerCredentials.createInsecure(),
): Promise<RunningGrpcServer> {
  const server = new grpc.Server(options);
  for (const s of services) server.addService(s.definition, s.implementation);
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  const bound = await new Promise<number>((resolve, reject) => server.bindAsync(address, credentials, (err, p) => (err ? reject(err) : resolve(p))));
  tuneHttp2Sessions(server);
  return {
    host,
    port: bound,
    stop: (graceMs = 2000) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        timer.unref();
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}

/** HTTP/2 receive window per stream and per connection on the server side. */
const STREAM_WINDOW_BYTES = 8 * 1024 * 1024;
const CONNECTION_WINDOW_BYTES = 32 * 1024 * 1024;

/**
 * Two transport settings grpc-js's server leaves at Node's defaults, which cost throughput:
 * - Nagle's algorithm stays on for accepted sockets, so small frames (headers, trailers, window
 *   updates) wait for the peer's delayed ACK: tens of milliseconds per call. Turned off, as the grpc-js
 *   client does on its side.
 * - The HTTP/2 receive window is 64 KiB per stream, which caps uploads at one window per round trip;
 *   each session announces larger windows.
 * It reaches into grpc-js's map of its HTTP/2 servers; if a future grpc-js lacks it, the server keeps
 * working with the defaults.
 */
function tuneHttp2Sessions(server: grpc.Server): void {
  const http2Servers = (server as unknown as { http2Servers?: Map<Http2ServerLike, unknown> }).http2Servers;
  if (!(http2Servers instanceof Map)) return;
  for (const http2Server of http2Servers.keys()) {
    // The raw socket, before HTTP/2 takes it over (sessions refuse socket manipulation).
    http2Server.on('connection', (socket: { setNoDelay(noDelay: boolean): unknown }) => socket.setNoDelay(true));
    http2Server.on('session', (session: Http2SessionLike) => {
      try {
        session.settings({ initialWindowSize: STREAM_WINDOW_BYTES });
        session.setLocalWindowSize(CONNECTION_WINDOW_BYTES);
      } catch {
        // A session that is already closing: nothing to tune.
      }
    });
  }
}

interface Http2ServerLike {
  on(event: 'session', listener: (session: Http2SessionLike) => void): unknown;
  on(event: 'connection', listener: (socket: { setNoDelay(noDelay: boolean): unknown }) => void): unknown;
}
interface Http2SessionLike {
  settings(settings: { initialWindowSize: number }): void;
  setLocalWindowSize(size: number): void;
}
