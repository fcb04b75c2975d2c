import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { UsageError } from '../core/index.js';

/** `--tls_certificate`, `--tls_client_certificate`, `--tls_client_key`: PEM files. */
export interface TlsFiles {
  readonly certificate?: string;
  readonly clientCertificate?: string;
  readonly clientKey?: string;
}

/** The PEM material of a TLS connection; `ca` undefined: Node's bundled roots. */
export interface TlsMaterial {
  readonly ca?: Buffer;
  readonly key?: Buffer;
  readonly cert?: Buffer;
}

/**
 * What both transports (grpc-js for streams, node:http2 for unary calls) trust and present, so they
 * connect alike. The roots: `--tls_certificate` when given; else `GRPC_DEFAULT_SSL_ROOTS_FILE_PATH`
 * (which grpc-js honours); else Node's bundled roots plus the extra CAs the launcher moved from
 * NODE_EXTRA_CA_CERTS to KILN_EXTRA_CA_CERTS (bin/kiln: Node would parse them at every start-up),
 * added here as Node adds NODE_EXTRA_CA_CERTS: to the bundled roots, not replacing them.
 * @throws UsageError naming the flag or variable of a file that cannot be read, or a client
 *   certificate without its key.
 */
export function tlsMaterial(tls: TlsFiles, env: NodeJS.ProcessEnv = process.env): TlsMaterial {
  const key = readPem(tls.clientKey, '--tls_client_key');
  const cert = readPem(tls.clientCertificate, '--tls_client_certificate');
  if ((key === undefined) !== (cert === undefined)) throw new UsageError('--tls_client_certificate and --tls_client_key must be given together');
  const ca =
    readPem(tls.certificate, '--tls_certificate') ??
    readPem(env['GRPC_DEFAULT_SSL_ROOTS_FILE_PATH'] || undefined, 'GRPC_DEFAULT_SSL_ROOTS_FILE_PATH') ??
    bundledRootsWithExtra(env);
  return { ...(ca ? { ca } : {}), ...(key ? { key } : {}), ...(cert ? { cert } : {}) };
}

function bundledRootsWithExtra(env: NodeJS.ProcessEnv): Buffer | undefined {
  const extra = readPem(env['KILN_EXTRA_CA_CERTS'] || undefined, 'NODE_EXTRA_CA_CERTS (passed on as KILN_EXTRA_CA_CERTS)');
  return extra === undefined ? undefined : Buffer.concat([Buffer.from(rootCertificates.join('\n') + '\n'), extra]);
}

function readPem(path: string | undefined, flag: string): Buffer | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path);
  } catch (e) {
    throw new UsageError(`${flag}=${path}: cannot read the file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, undefined, { cause: e });
  }
}
