import * as grpc from '@grpc/grpc-js';
import { GrpcCallError } from './grpc-call-status.js';

/** A gRPC message's prefix: a flag byte (1: compressed) and the big-endian length. */
export const MESSAGE_PREFIX_BYTES = 5;

/** `message` with its gRPC prefix (flag 0: not compressed), ready to send as the request body. */
export function framedMessage(message: Uint8Array): Buffer {
  const framed = Buffer.allocUnsafe(MESSAGE_PREFIX_BYTES + message.length);
  framed[0] = 0;
  framed.writeUInt32BE(message.length, 1);
  framed.set(message, MESSAGE_PREFIX_BYTES);
  return framed;
}

/**
 * Collects the DATA frames of a unary response: exactly one message, never compressed (we do not
 * offer compression), at most `maxBytes`. A frame that breaks those rules fails the call at once, so
 * a large or hostile answer is not buffered further.
 */
export class UnaryResponseReader {
  private readonly chunks: Buffer[] = [];
  private received = 0;
  /** Prefix and message bytes, once the prefix has arrived. */
  private expected = -1;

  constructor(private readonly maxBytes: number) {}

  /** Adds a DATA frame's bytes; a failure when the response cannot be a valid unary answer. */
  push(chunk: Buffer): GrpcCallError | undefined {
    this.chunks.push(chunk);
    this.received += chunk.length;
    if (this.expected < 0 && this.received >= MESSAGE_PREFIX_BYTES) {
      const head = this.chunks[0]!.length >= MESSAGE_PREFIX_BYTES ? this.chunks[0]! : Buffer.concat(this.chunks);
      const flag = head[0]!;
      const length = head.readUInt32BE(1);
      if (flag === 1) return new GrpcCallError(grpc.status.INTERNAL, 'Received compressed message but "grpc-encoding" header was identity');
      if (flag !== 0) return new GrpcCallError(grpc.status.INTERNAL, `Received message with an invalid flag byte ${flag}`);
      if (length > this.maxBytes) return new GrpcCallError(grpc.status.RESOURCE_EXHAUSTED, `Received message larger than max (${length} vs. ${this.maxBytes})`);
      this.expected = MESSAGE_PREFIX_BYTES + length;
    }
    if (this.expected >= 0 && this.received > this.expected) return new GrpcCallError(grpc.status.UNIMPLEMENTED, 'Too many responses received');
    return undefined;
  }

  /** The message once the stream has ended with OK. */
  message(): Buffer | GrpcCallError {
    if (this.received === 0) return new GrpcCallError(grpc.status.UNIMPLEMENTED, 'No message received');
    if (this.received !== this.expected)
      return new GrpcCallError(
        grpc.status.INTERNAL,
        `The response ended inside a message (${this.received} of ${Math.max(this.expected, MESSAGE_PREFIX_BYTES)} bytes)`,
      );
    const whole = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.received);
    return whole.subarray(MESSAGE_PREFIX_BYTES);
  }
}
