import { readFileSync } from 'node:fs';
import { BlobAccessConfigError, type BlobAccess, type GrpcBlobAccessConfig } from '../core/blobstore/index.js';
import { RemoteBlobAccess } from './remote-blob-access.js';
import { parseRemoteEndpoint } from './remote-endpoint.js';

/** Deadline of a call to a storage node, and the idle bound of its streams. */
const DEFAULT_TIMEOUT_MS = 60_000;
/** Few retries: a mirrored store falls back to the other node rather than wait for this one. */
const DEFAULT_RETRIES = 2;

/**
 * The `grpc` backends of a server's or an executor's storage (their `connectRemote` dependency): storage nodes reached
 * with Kiln's REAPI client, each opened once here and closed with `close`.
 */
export class RemoteStorage {
  private readonly opened: RemoteBlobAccess[] = [];

  /**
   * A RemoteBlobAccess for `config`.
   * @throws BlobAccessConfigError naming `where` for a bad endpoint or an unreadable TLS or token file
   */
  readonly connect = async (config: GrpcBlobAccessConfig, where: string): Promise<BlobAccess> => {
    const field = <T>(key: string, step: () => T): T => {
      try {
        return step();
      } catch (e) {
        throw new BlobAccessConfigError(`${where}.${key}: ${(e as Error).message}`);
      }
    };
    const endpoint = field('endpoint', () => parseRemoteEndpoint(config.endpoint, 'endpoint'));
    const token = config.tokenFile === undefined ? undefined : field('tokenFile', () => readToken(config.tokenFile!));
    const tls = config.tls ?? {};
    // The TLS files are read here: a missing one is this field's mistake.
    const remote = field(
      'tls',
      () =>
        new RemoteBlobAccess({
          endpoint,
          instanceName: config.instanceName ?? '',
          keyspace: config.keyspace ?? 'cas',
          tls: {
            ...(tls.ca ? { certificate: tls.ca } : {}),
            ...(tls.certificate ? { clientCertificate: tls.certificate } : {}),
            ...(tls.key ? { clientKey: tls.key } : {}),
          },
          ...(token !== undefined ? { token } : {}),
          timeoutMs: config.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          retries: config.retries ?? DEFAULT_RETRIES,
        }),
    );
    this.opened.push(remote);
    return remote;
  };

  close(): void {
    for (const remote of this.opened.splice(0)) remote.close();
  }
}

/** The token a token file holds: its content without surrounding white space. */
function readToken(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const token = text.trim();
  if (token === '' || /\s/.test(token)) throw new Error(`${path}: expected one token (no white space inside)`);
  return token;
}
