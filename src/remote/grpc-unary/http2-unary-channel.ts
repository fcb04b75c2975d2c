import * as grpc from '@grpc/grpc-js';
import { constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { RemoteEndpoint } from '../remote-endpoint.js';
import type { TlsMaterial } from '../remote-tls.js';
import { GrpcCallError, grpcTimeout, statusOfHttpCode, statusOfReset, statusOfTrailers } from './grpc-call-status.js';
import { openHttp2Session } from './open-http2-session.js';
import { framedMessage, UnaryResponseReader } from './unary-response-reader.js';

/** A unary method as the generated service definitions describe it (`reapi.ActionCacheService.GetActionResult`). */
export interface UnaryMethod<Req, Res> {
  /** `/<package>.<Service>/<Method>`. */
  readonly path: string;
  readonly requestSerialize: (request: Req) => Buffer;
  readonly responseDeserialize: (bytes: Buffer) => Res;
}

export interface Http2UnaryChannelOptions {
  /** Largest response message accepted (RESOURCE_EXHAUSTED beyond). */
  readonly maxReceiveBytes: number;
  /** TLS for a `grpcs://` endpoint. */
  readonly tls?: TlsMaterial;
}

const USER_AGENT = `kiln-http2-unary/1 node/${process.versions.node}`;

/**
 * Unary gRPC calls over one `node:http2` session per endpoint: about half the client CPU of
 * @grpc/grpc-js per call, which matters for the ~10^4 GetActionResult calls of a cached build. Fails
 * as grpc-js fails (a `grpc.ServiceError`-like GrpcCallError with the trailers as metadata), so
 * callers and the Retrier cannot tell the transports apart. The session is opened on the first call,
 * shared by all, replaced after it closes, fails or receives GOAWAY, and holds the process open only
 * while a call is in flight.
 */
export class Http2UnaryChannel {
  private connection: Connection | undefined;
  private readonly secureContext: SecureContext | undefined;
  private closed = false;

  constructor(
    readonly endpoint: RemoteEndpoint,
    private readonly options: Http2UnaryChannelOptions,
  ) {
    this.secureContext = endpoint.secure ? createSecureContext({ ...options.tls }) : undefined;
  }

  /** Calls `method`; `deadline` (ms since the epoch) ends the call with DEADLINE_EXCEEDED. */
  call<Req, Res>(method: UnaryMethod<Req, Res>, request: Req, metadata: grpc.Metadata, deadline?: number): Promise<Res> {
    if (this.closed) return Promise.reject(new GrpcCallError(grpc.status.CANCELLED, 'Channel has been shut down'));
    let body: Buffer;
    try {
      body = framedMessage(method.requestSerialize(request));
    } catch (e) {
      return Promise.reject(new GrpcCallError(grpc.status.INTERNAL, `Request message serialization failure: ${(e as Error).message}`));
    }
    const headers: OutgoingHttpHeaders = metadata.toHttp2Headers();
    headers[':method'] = 'POST';
    headers[':path'] = method.path;
    headers['content-type'] = 'application/grpc';
    headers['te'] = 'trailers';
    headers['user-agent'] = USER_AGENT;
    if (deadline !== undefined) {
      const left = deadline - Date.now();
      if (left <= 0) return Promise.reject(new GrpcCallError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
      headers['grpc-timeout'] = grpcTimeout(left);
    }
    const connection = this.usableConnection();
    let stream: ClientHttp2Stream;
    try {
      stream = connection.session.request(headers, { endStream: false });
    } catch (e) {
      // The session became unusable (closing, destroyed): the next call opens another.
      connection.retire(e as Error);
      return Promise.reject(new GrpcCallError(grpc.status.UNAVAILABLE, (e as Error).message));
    }
    stream.end(body);
    return new Promise<Res>((resolve, reject) => {
      connection.callStarted();
      receiveUnary(stream, connection, this.options.maxReceiveBytes, deadline, (failure, message) => {
        connection.callEnded();
        if (failure) return reject(failure);
        try {
          resolve(method.responseDeserialize(message!));
        } catch (e) {
          reject(new GrpcCallError(grpc.status.INTERNAL, `Response message parsing error: ${(e as Error).message}`));
        }
      });
    });
  }

  /** Ends the session once the calls in flight are done; later calls fail. */
  close(): void {
    this.closed = true;
    this.connection?.session.close();
    this.connection = undefined;
  }

  private usableConnection(): Connection {
    if (this.connection?.usable !== true) this.connection = new Connection(openHttp2Session(this.endpoint, this.secureContext));
    return this.connection;
  }
}

/** One HTTP/2 session and whether new calls may use it. */
class Connection {
  usable = true;
  /** Why the session ended (its error, GOAWAY, the socket closing): the details of calls it broke. */
  failure: Error | undefined;
  private callsInFlight = 0;

  constructor(readonly session: ClientHttp2Session) {
    session.unref();
    session.on('error', (e) => this.retire(e));
    session.on('goaway', (code) => this.retire(new Error(`the server sent GOAWAY (HTTP/2 error code ${code})`)));
    session.on('close', () => this.retire(new Error('Connection dropped')));
  }

  retire(why: Error): void {
    this.usable = false;
    this.failure ??= why;
  }

  /** A session with calls in flight keeps the process alive; an idle one does not. */
  callStarted(): void {
    if (this.callsInFlight++ === 0) this.session.ref();
  }

  callEnded(): void {
    if (--this.callsInFlight === 0 && !this.session.destroyed) this.session.unref();
  }
}

/**
 * Reads one unary response from `stream` and calls `done` once: with the message bytes, or with the
 * call's failure as @grpc/grpc-js would report it.
 */
function receiveUnary(
  stream: ClientHttp2Stream,
  connection: Connection,
  maxReceiveBytes: number,
  deadline: number | undefined,
  done: (failure: GrpcCallError | undefined, message?: Buffer) => void,
): void {
  const reader = new UnaryResponseReader(maxReceiveBytes);
  let httpStatus: number | undefined;
  /** null until the server sends a status; undefined for OK. */
  let status: GrpcCallError | undefined | null = null;
  let streamError: Error | undefined;
  let settled = false;
  const settle = (failure: GrpcCallError | undefined, message?: Buffer) => {
    if (settled) return;
    settled = true;
    if (timer) clearTimeout(timer);
    done(failure, message);
  };
  /** Ends the call before the server did: the stream is reset so the server stops working on it. */
  const abandon = (failure: GrpcCallError) => {
    settle(failure);
    if (!stream.closed) stream.close(constants.NGHTTP2_CANCEL);
  };
  const timer =
    deadline === undefined
      ? undefined
      : setTimeout(() => abandon(new GrpcCallError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded')), deadline - Date.now());

  stream.on('response', (headers: IncomingHttpHeaders, flags: number) => {
    httpStatus = Number(headers[':status']);
    // A trailers-only response: the status is in the headers.
    if (flags & constants.NGHTTP2_FLAG_END_STREAM) status = statusOfTrailers(headers, httpStatus);
  });
  stream.on('data', (chunk: Buffer) => {
    if (settled) return;
    const failure = reader.push(chunk);
    // A proxy's HTML error page fails the framing; its HTTP status says more.
    if (failure) abandon(httpStatus !== undefined && httpStatus !== 200 ? statusOfHttpCode(httpStatus) : failure);
  });
  stream.on('trailers', (trailers: IncomingHttpHeaders) => {
    status = statusOfTrailers(trailers, httpStatus);
  });
  stream.on('error', (e: Error) => {
    streamError = e;
  });
  stream.on('close', () => {
    if (settled) return;
    if (status === null) return settle(statusWithoutTrailers(stream, connection, httpStatus, streamError));
    if (status !== undefined) return settle(status);
    const message = reader.message();
    if (message instanceof GrpcCallError) settle(message);
    else settle(undefined, message);
  });
}

/** Why a stream ended without a gRPC status: its connection broke (UNAVAILABLE, so the call is retried), an HTTP error, or a reset. */
function statusWithoutTrailers(
  stream: ClientHttp2Stream,
  connection: Connection,
  httpStatus: number | undefined,
  streamError: Error | undefined,
): GrpcCallError {
  const code = (streamError as NodeJS.ErrnoException | undefined)?.code;
  if (
    !connection.usable ||
    connection.session.destroyed ||
    code === 'ERR_HTTP2_STREAM_CANCEL' ||
    code === 'ECONNRESET' ||
    code === 'ERR_HTTP2_GOAWAY_SESSION'
  ) {
    const cause = (streamError?.cause as Error | undefined) ?? connection.failure ?? streamError;
    return new GrpcCallError(grpc.status.UNAVAILABLE, cause?.message ?? 'Connection dropped');
  }
  if (stream.rstCode === constants.NGHTTP2_NO_ERROR && httpStatus !== undefined && httpStatus !== 200) return statusOfHttpCode(httpStatus);
  return statusOfReset(stream.rstCode ?? constants.NGHTTP2_INTERNAL_ERROR);
}
