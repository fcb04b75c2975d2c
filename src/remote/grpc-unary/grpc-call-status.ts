import * as grpc from '@grpc/grpc-js';
import { constants as http2, type IncomingHttpHeaders } from 'node:http2';

/**
 * A failed call as @grpc/grpc-js reports it (a `grpc.ServiceError`): the code, the server's details
 * and the trailers as metadata, so `remoteCallError` reads RetryInfo and PreconditionFailure from
 * `grpc-status-details-bin` whichever transport made the call.
 */
export class GrpcCallError extends Error implements grpc.ServiceError {
  constructor(
    readonly code: grpc.status,
    readonly details: string,
    readonly metadata: grpc.Metadata = new grpc.Metadata(),
  ) {
    super(`${code} ${grpc.status[code]}: ${details}`);
  }
}

/**
 * The status of a call from its trailers (or the headers of a trailers-only response): `grpc-status`
 * and the percent-decoded `grpc-message`; without them, the HTTP status as gRPC maps it; the other
 * entries become the error's metadata. Undefined for OK.
 */
export function statusOfTrailers(trailers: IncomingHttpHeaders, httpStatus: number | undefined): GrpcCallError | undefined {
  const status = trailers['grpc-status'];
  if (typeof status === 'string' && status !== '') {
    const code = Number(status);
    if (code === grpc.status.OK) return undefined;
    const message = trailers['grpc-message'];
    const details = typeof message === 'string' ? percentDecoded(message) : '';
    return new GrpcCallError(Number.isInteger(code) ? code : grpc.status.UNKNOWN, details, metadataOf(trailers));
  }
  if (httpStatus !== undefined && httpStatus !== 200) return statusOfHttpCode(httpStatus, metadataOf(trailers));
  return new GrpcCallError(grpc.status.UNKNOWN, 'No status information received', metadataOf(trailers));
}

/** gRPC's mapping of an HTTP status that came without a gRPC status (a proxy's answer, most often). */
export function statusOfHttpCode(httpStatus: number, metadata?: grpc.Metadata): GrpcCallError {
  return new GrpcCallError(HTTP_STATUS_CODES.get(httpStatus) ?? grpc.status.UNKNOWN, `Received HTTP status code ${httpStatus}`, metadata);
}

const HTTP_STATUS_CODES = new Map<number, grpc.status>([
  [400, grpc.status.INTERNAL],
  [401, grpc.status.UNAUTHENTICATED],
  [403, grpc.status.PERMISSION_DENIED],
  [404, grpc.status.UNIMPLEMENTED],
  [429, grpc.status.UNAVAILABLE],
  [502, grpc.status.UNAVAILABLE],
  [503, grpc.status.UNAVAILABLE],
  [504, grpc.status.UNAVAILABLE],
]);

/** A stream the server reset (RST_STREAM) before any status, mapped as @grpc/grpc-js maps it. */
export function statusOfReset(rstCode: number): GrpcCallError {
  switch (rstCode) {
    case http2.NGHTTP2_REFUSED_STREAM:
      return new GrpcCallError(grpc.status.UNAVAILABLE, 'Stream refused by server');
    case http2.NGHTTP2_CANCEL:
      return new GrpcCallError(grpc.status.CANCELLED, 'Call cancelled');
    case http2.NGHTTP2_ENHANCE_YOUR_CALM:
      return new GrpcCallError(grpc.status.RESOURCE_EXHAUSTED, 'Bandwidth exhausted or memory limit exceeded');
    case http2.NGHTTP2_INADEQUATE_SECURITY:
      return new GrpcCallError(grpc.status.PERMISSION_DENIED, 'Protocol not secure enough');
    case http2.NGHTTP2_NO_ERROR:
      return new GrpcCallError(grpc.status.INTERNAL, `Received RST_STREAM with code ${rstCode} (Call ended without gRPC status)`);
    default:
      return new GrpcCallError(grpc.status.INTERNAL, `Received RST_STREAM with code ${rstCode}`);
  }
}

/** `grpc-timeout` for a deadline `ms` from now: at most 8 digits, in the finest unit that fits. */
export function grpcTimeout(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1e8) return `${whole}m`;
  if (whole < 1e11) return `${Math.ceil(whole / 1000)}S`;
  return `${Math.min(99_999_999, Math.ceil(whole / 3_600_000))}H`;
}

function percentDecoded(message: string): string {
  try {
    return decodeURIComponent(message);
  } catch {
    return message; // not valid percent-encoding: shown as sent
  }
}

/** The trailers as metadata (`-bin` values base64-decoded), without the status entries. */
function metadataOf(trailers: IncomingHttpHeaders): grpc.Metadata {
  const metadata = grpc.Metadata.fromHttp2Headers(trailers);
  metadata.remove('grpc-status');
  metadata.remove('grpc-message');
  return metadata;
}
