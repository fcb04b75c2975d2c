import { readFileSync, statSync } from 'node:fs';
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
    const token = config.tokenFile === undefined ? undefined : field('tokenFile', () => tokenFileReader(config.tokenFile!));
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

/**
 * The token of a token file, read again when the file changes (its size or mtime: one stat per call),
 * so a node's token is rotated without a restart. A file that becomes unreadable or invalid keeps
 * the last good token (the node then says whether it still takes it).
 * @throws Error when the file cannot be read now
 */
function tokenFileReader(path: string): () => string {
  let token = readToken(path);
  let stamp = stampOf(path);
  return () => {
    const now = stampOf(path);
    if (now !== stamp) {
      try {
        token = readToken(path);
        stamp = now;
      } catch {
        // keep the last good token
      }
    }
    return token;
  };
}

function stampOf(path: string): string {
  try {
    const st = statSync(path);
    return `${st.size}:${st.mtimeMs}:${st.ino}`;
  } catch {
    return '';
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
