import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { UsageError } from '../src/core/index.js';

/** How an executor proves itself to the scheduler and checks the scheduler's certificate. */
export interface SchedulerCredentials {
  /** PEM CA bundle the scheduler's certificate must chain to; the system's roots when absent. */
  readonly tlsCa?: string;
  /** PEM client certificate and key (mutual TLS), given together. */
  readonly tlsCertificate?: string;
  readonly tlsKey?: string;
  /** Sent as `authorization: Bearer TOKEN` on every call. */
  readonly token?: string;
}

/** Where and how the executor's clients (worker protocol, CAS) connect. */
export interface SchedulerChannel {
  /** host:port. */
  readonly address: string;
  readonly credentials: grpc.ChannelCredentials;
  readonly options: grpc.ClientOptions;
}

/**
 * The channel to `scheduler`: `grpcs://host:port` is TLS (with the CA and client key pair given),
 * `grpc://host:port` or a bare `host:port` plain. A token rides on every call through a client
 * interceptor, so the worker protocol and the CAS clients carry it alike.
 * @throws UsageError naming the setting of a file that cannot be read, or TLS files given for a plain URL
 */
export function schedulerChannel(scheduler: string, credentials: SchedulerCredentials = {}): SchedulerChannel {
  const tls = scheduler.startsWith('grpcs://');
  const address = scheduler.replace(/^grpcs?:\/\//, '');
  const files = [credentials.tlsCa, credentials.tlsCertificate, credentials.tlsKey];
  if (!tls && files.some((f) => f !== undefined))
    throw new UsageError(`--tls-ca, --tls-certificate and --tls-key need a grpcs:// scheduler, got '${scheduler}'`);
  if ((credentials.tlsCertificate === undefined) !== (credentials.tlsKey === undefined))
    throw new UsageError('--tls-certificate and --tls-key must be given together');
  const channelCredentials = tls
    ? grpc.credentials.createSsl(
        readPem(credentials.tlsCa, '--tls-ca'),
        readPem(credentials.tlsKey, '--tls-key'),
        readPem(credentials.tlsCertificate, '--tls-certificate'),
      )
    : grpc.credentials.createInsecure();
  const token = credentials.token;
  const interceptors: grpc.Interceptor[] = token
    ? [
        (options, nextCall) =>
          new grpc.InterceptingCall(nextCall(options), {
            start: (metadata, listener, next) => {
              metadata.set('authorization', `Bearer ${token}`);
              next(metadata, listener);
            },
          }),
      ]
    : [];
  return { address, credentials: channelCredentials, options: { interceptors } };
}

function readPem(path: string | undefined, flag: string): Buffer | null {
  if (path === undefined) return null;
  try {
    return readFileSync(path);
  } catch (e) {
    throw new UsageError(`${flag}=${path}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/** The token of a token file: its content without surrounding white space. */
export function readTokenFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`--token-file=${path}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const token = text.trim();
  if (token === '' || /\s/.test(token)) throw new UsageError(`--token-file=${path}: expected one token (no white space inside)`);
  return token;
}

/** Whether a failed call means the scheduler refuses these credentials (retrying cannot help). */
export function isRefusal(code: grpc.status | undefined): boolean {
  return code === grpc.status.UNAUTHENTICATED || code === grpc.status.PERMISSION_DENIED;
}
