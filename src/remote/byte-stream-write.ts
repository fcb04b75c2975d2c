import * as grpc from '@grpc/grpc-js';
import type { bytestream } from '../core/index.js';
import { RemoteCallError, remoteCallError } from './remote-call-error.js';
import type { RemoteChannel } from './remote-channel.js';
import { StreamIdleBound } from './stream-idle-bound.js';

/** Bytes per ByteStream message. */
const MESSAGE_BYTES = 1024 * 1024;

/**
 * One ByteStream Write stream fed chunk by chunk, never holding the blob: Kiln's one ByteStream
 * writer. Each message goes once the transport took the one before (so a server that stops reading
 * holds back the sender instead of a queue growing); the one that reaches `totalBytes` (the bytes the
 * stream carries: the blob's, or its zstd frame's) carries finish_write. The idle bound runs only
 * while this side waits for the transport or the answer, so a slow source is not mistaken for a
 * silent server. One stream, from `startOffset`: RemoteCas resumes a broken upload with a new one
 * where QueryWriteStatus says; a relay (RemoteBlobAccess) keeps no source and fails, its sender retries.
 */
export class ByteStreamUpload {
  private readonly call: grpc.ClientWritableStream<bytestream.WriteRequestInit>;
  private readonly answer: Promise<bytestream.WriteResponse>;
  private readonly idle: StreamIdleBound;
  private readonly what: string;
  private sent: number;
  private messages = 0;
  /** The server ended the call early with success: the blob was already stored. */
  private complete = false;

  constructor(
    channel: RemoteChannel,
    private readonly resourceName: string,
    private readonly totalBytes: number,
    metadata: grpc.Metadata,
    timeoutMs: number,
    startOffset = 0,
  ) {
    this.sent = startOffset;
    this.what = `ByteStream.Write of ${resourceName} on ${channel.endpoint.url}`;
    let call!: grpc.ClientWritableStream<bytestream.WriteRequestInit>;
    this.answer = new Promise<bytestream.WriteResponse>((resolve, reject) => {
      call = channel.byteStream.Write(metadata, (err: grpc.ServiceError | null, response?: bytestream.WriteResponse) => {
        this.idle.stop();
        if (err) reject(this.idle.expired ?? remoteCallError(err, this.what));
        else {
          this.complete = true;
          resolve(response!);
        }
      }) as grpc.ClientWritableStream<bytestream.WriteRequestInit>;
    });
    this.answer.catch(() => undefined); // reported by the write or finish that meets it
    this.call = call;
    this.idle = new StreamIdleBound(timeoutMs, this.what, () => call.cancel());
    this.idle.stop();
  }

  get writtenBytes(): number {
    return this.sent;
  }

  /** Sends `chunk` (the caller keeps the total within the digest's size). */
  async write(chunk: Uint8Array): Promise<void> {
    for (let at = 0; at < chunk.byteLength && !this.complete; at += MESSAGE_BYTES)
      await this.send(chunk.subarray(at, Math.min(chunk.byteLength, at + MESSAGE_BYTES)));
  }

  private async send(data: Uint8Array): Promise<void> {
    {
      const end = this.sent + data.byteLength;
      const message = { resourceName: this.messages++ === 0 ? this.resourceName : '', writeOffset: this.sent, finishWrite: end === this.totalBytes, data };
      this.idle.touch();
      const taken = new Promise<void>((resolve, reject) => this.call.write(message, (e?: Error | null) => (e ? reject(e) : resolve())));
      try {
        await Promise.race([taken, this.answer]);
      } catch (e) {
        throw this.idle.expired ?? remoteCallError(e, this.what);
      } finally {
        this.idle.stop();
      }
      this.sent = end;
    }
  }

  /** Ends the stream and waits for the server's answer: the whole blob committed. */
  async finish(): Promise<void> {
    if (!this.complete && this.sent !== this.totalBytes) {
      this.cancel();
      throw new RemoteCallError(`${this.what}: the upload ended after ${this.sent} of ${this.totalBytes} bytes`, grpc.status.INVALID_ARGUMENT);
    }
    // A stream resumed at the very end still names its resource and finishes the write.
    if (this.messages === 0 && !this.complete) await this.send(new Uint8Array(0));
    this.idle.touch();
    this.call.end();
    const response = await this.answer;
    // UNAVAILABLE, retryable: a resuming sender asks QueryWriteStatus where to go on.
    if (response.committedSize !== this.totalBytes && response.committedSize !== -1) {
      throw new RemoteCallError(`${this.what}: the server committed ${response.committedSize} of ${this.totalBytes} bytes`, grpc.status.UNAVAILABLE);
    }
  }

  cancel(): void {
    this.idle.stop();
    this.call.cancel();
  }
}
