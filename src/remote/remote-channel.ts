import * as grpc from '@grpc/grpc-js';
import { bytestream, reapi } from '../core/index.js';
import { Http2UnaryChannel, type UnaryMethod } from './grpc-unary/http2-unary-channel.js';
import { remoteCallError } from './remote-call-error.js';
import type { RemoteEndpoint } from './remote-endpoint.js';
import { tlsMaterial, type TlsFiles, type TlsMaterial } from './remote-tls.js';

/** Messages up to this size are received (a Tree or a batch read can be large). */
const MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

/**
 * The REAPI services of one endpoint. Unary calls (GetActionResult, the CAS batches, GetCapabilities,
 * ...) go over a lean `node:http2` transport, half the client CPU of @grpc/grpc-js per call; the
 * streams (ByteStream Read/Write, Execute, WaitExecution) stay on @grpc/grpc-js, whose clients share
 * one connection (the subchannel of clients with the same target and options). Both trust and
 * present the same TLS material.
 */
export class RemoteChannel {
  readonly unary: Http2UnaryChannel;
  readonly byteStream: bytestream.ByteStreamClient;
  readonly execution: reapi.ExecutionClient;

  constructor(
    readonly endpoint: RemoteEndpoint,
    tls: TlsFiles = {},
  ) {
    const material = endpoint.secure ? tlsMaterial(tls) : undefined;
    this.unary = new Http2UnaryChannel(endpoint, { maxReceiveBytes: MAX_RECEIVE_BYTES, ...(material ? { tls: material } : {}) });
    const credentials = material ? secureCredentials(material) : grpc.credentials.createInsecure();
    const options: grpc.ChannelOptions = { 'grpc.max_receive_message_length': MAX_RECEIVE_BYTES, 'grpc.enable_retries': 0 };
    const make = <T>(definition: object, name: string): T => {
      const Ctor = grpc.makeGenericClientConstructor(definition as grpc.ServiceDefinition, name);
      return new Ctor(endpoint.target, credentials, options) as unknown as T;
    };
    this.byteStream = make(bytestream.ByteStreamService, 'ByteStream');
    this.execution = make(reapi.ExecutionService, 'Execution');
  }

  close(): void {
    this.unary.close();
    this.byteStream.close();
    this.execution.close();
  }
}

/** The channel credentials of `endpoint`: TLS with the flags' files for grpcs://, none for grpc:// (every gRPC client of Kiln's). */
export function channelCredentials(endpoint: RemoteEndpoint, tls: TlsFiles = {}): grpc.ChannelCredentials {
  return endpoint.secure ? secureCredentials(tlsMaterial(tls)) : grpc.credentials.createInsecure();
}

function secureCredentials(material: TlsMaterial): grpc.ChannelCredentials {
  return grpc.credentials.createSsl(material.ca ?? null, material.key ?? null, material.cert ?? null);
}

/**
 * Calls a unary method of `channel` as a promise, with a deadline `timeoutMs` from now (none when 0);
 * a failure becomes a RemoteCallError saying `what`. Every unary REAPI call of the client goes
 * through here.
 */
export function unaryCall<Req, Res>(
  channel: RemoteChannel,
  method: UnaryMethod<Req, Res>,
  request: Req,
  metadata: grpc.Metadata,
  timeoutMs: number,
  what: string,
): Promise<Res> {
  return channel.unary.call(method, request, metadata, timeoutMs > 0 ? Date.now() + timeoutMs : undefined).catch((err: unknown) => {
    throw remoteCallError(err, what);
  });
}
