import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { bytestream, reapi, UsageError } from '../core/index.js';
import { remoteCallError } from './remote-call-error.js';
import type { RemoteEndpoint } from './remote-endpoint.js';

/** `--tls_certificate`, `--tls_client_certificate`, `--tls_client_key`: PEM files. */
export interface TlsFiles {
  readonly certificate?: string;
  readonly clientCertificate?: string;
  readonly clientKey?: string;
}

/** Messages up to this size are received (a Tree or a batch read can be large). */
const MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

/**
 * The REAPI services of one endpoint, on one connection (@grpc/grpc-js shares the subchannel of
 * clients with the same target and options).
 */
export class RemoteChannel {
  readonly capabilities: reapi.CapabilitiesClient;
  readonly cas: reapi.ContentAddressableStorageClient;
  readonly byteStream: bytestream.ByteStreamClient;
  readonly actionCache: reapi.ActionCacheClient;
  readonly execution: reapi.ExecutionClient;

  constructor(
    readonly endpoint: RemoteEndpoint,
    tls: TlsFiles = {},
  ) {
    const credentials = endpoint.secure ? secureCredentials(tls) : grpc.credentials.createInsecure();
    const options: grpc.ChannelOptions = { 'grpc.max_receive_message_length': MAX_RECEIVE_BYTES, 'grpc.enable_retries': 0 };
    const make = <T>(definition: object, name: string): T => {
      const Ctor = grpc.makeGenericClientConstructor(definition as grpc.ServiceDefinition, name);
      return new Ctor(endpoint.target, credentials, options) as unknown as T;
    };
    this.capabilities = make(reapi.CapabilitiesService, 'Capabilities');
    this.cas = make(reapi.ContentAddressableStorageService, 'ContentAddressableStorage');
    this.byteStream = make(bytestream.ByteStreamService, 'ByteStream');
    this.actionCache = make(reapi.ActionCacheService, 'ActionCache');
    this.execution = make(reapi.ExecutionService, 'Execution');
  }

  close(): void {
    for (const client of [this.capabilities, this.cas, this.byteStream, this.actionCache, this.execution]) client.close();
  }
}

function secureCredentials(tls: TlsFiles): grpc.ChannelCredentials {
  const read = (path: string | undefined, flag: string): Buffer | null => {
    if (path === undefined) return null;
    try {
      return readFileSync(path);
    } catch (e) {
      throw new UsageError(`${flag}=${path}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, undefined, { cause: e });
    }
  };
  const key = read(tls.clientKey, '--tls_client_key');
  const cert = read(tls.clientCertificate, '--tls_client_certificate');
  if ((key === null) !== (cert === null)) throw new UsageError('--tls_client_certificate and --tls_client_key must be given together');
  return grpc.credentials.createSsl(read(tls.certificate, '--tls_certificate'), key, cert);
}

/** Calls a unary method as a promise; a failure becomes a RemoteCallError saying `what`. */
export function unaryCall<Req, Res>(
  client: grpc.Client,
  method: (request: Req, metadata: grpc.Metadata, options: Partial<grpc.CallOptions>, callback: grpc.requestCallback<Res>) => grpc.ClientUnaryCall,
  request: Req,
  metadata: grpc.Metadata,
  timeoutMs: number,
  what: string,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    const options = timeoutMs > 0 ? { deadline: Date.now() + timeoutMs } : {};
    method.call(client, request, metadata, options, (err, res) => (err ? reject(remoteCallError(err, what)) : resolve(res as Res)));
  });
}
