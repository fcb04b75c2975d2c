import * as grpc from '@grpc/grpc-js';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { InvalidArgumentError } from '../../src/core/index.js';
import type { ServerLog } from '../service-context.js';
import { watchFiles } from './file-watch.js';
import type { ServerTlsConfig } from './security-config.js';

type CaListener = grpc.experimental.CaCertificateUpdateListener;
type IdentityListener = grpc.experimental.IdentityCertificateUpdateListener;

interface TlsFilesContent {
  readonly certificate: Buffer;
  readonly key: Buffer;
  readonly clientCa?: Buffer;
}

/**
 * The server's certificate, key and client CA, read from their files and read again when they change.
 * grpc-js fixes `ServerCredentials.createSsl` at bind time, but its certificate-provider credentials
 * (`grpc.experimental.createCertificateProviderServerCredentials`) hand every update to the bound
 * server's `setSecureContext`: new connections get the new files, open ones keep theirs. A reload
 * whose files do not make a valid context (half-written, a key that does not match) is logged and
 * ignored, so a bad rotation never takes the port down.
 */
export class ReloadingServerTls implements grpc.experimental.CertificateProvider {
  private readonly caListeners = new Set<CaListener>();
  private readonly identityListeners = new Set<IdentityListener>();
  private readonly stopWatching: () => void;

  private constructor(
    private readonly config: ServerTlsConfig,
    private current: TlsFilesContent,
    private readonly log: ServerLog,
  ) {
    const files = [config.certificate, config.key, ...(config.clientCa ? [config.clientCa] : [])];
    this.stopWatching = watchFiles(files, () => void this.reload());
  }

  /** @throws InvalidArgumentError naming the config field whose file is unreadable or invalid */
  static async open(config: ServerTlsConfig, log: ServerLog): Promise<ReloadingServerTls> {
    const content = await readTlsFiles(config);
    const problem = contextProblem(content);
    if (problem) throw new InvalidArgumentError(`tls: ${problem}`);
    return new ReloadingServerTls(config, content, log);
  }

  /** The credentials to bind the port with; they follow every reload. */
  credentials(): grpc.ServerCredentials {
    return grpc.experimental.createCertificateProviderServerCredentials(this, this.config.clientCa ? this : null, this.config.requireClientCertificate);
  }

  /**
   * Reads the files again and publishes them when they changed and make a valid context.
   * @returns whether new material is now served
   */
  async reload(): Promise<boolean> {
    let next: TlsFilesContent;
    try {
      next = await readTlsFiles(this.config);
    } catch (e) {
      this.log.warn(`TLS files not reloaded, the previous ones stay in use: ${(e as Error).message}`);
      return false;
    }
    if (sameContent(next, this.current)) return false;
    const problem = contextProblem(next);
    if (problem) {
      this.log.warn(`TLS files not reloaded, the previous ones stay in use: ${problem}`);
      return false;
    }
    this.current = next;
    this.log.info(`TLS files reloaded (${this.config.certificate})`);
    for (const l of this.identityListeners) l(this.identityUpdate());
    for (const l of this.caListeners) l(this.caUpdate());
    return true;
  }

  close(): void {
    this.stopWatching();
  }

  // grpc-js registers its watcher only after adding these listeners: the current files go out on the next tick.
  addCaCertificateListener(listener: CaListener): void {
    this.caListeners.add(listener);
    process.nextTick(() => listener(this.caUpdate()));
  }
  removeCaCertificateListener(listener: CaListener): void {
    this.caListeners.delete(listener);
  }
  addIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.add(listener);
    process.nextTick(() => listener(this.identityUpdate()));
  }
  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.identityListeners.delete(listener);
  }

  private caUpdate(): grpc.experimental.CaCertificateUpdate | null {
    return this.current.clientCa ? { caCertificate: this.current.clientCa } : null;
  }
  private identityUpdate(): grpc.experimental.IdentityCertificateUpdate {
    return { certificate: this.current.certificate, privateKey: this.current.key };
  }
}

async function readTlsFiles(config: ServerTlsConfig): Promise<TlsFilesContent> {
  const read = async (path: string, field: string) => {
    try {
      return await readFile(path);
    } catch (e) {
      throw new InvalidArgumentError(`${field}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  };
  const [certificate, key, clientCa] = await Promise.all([
    read(config.certificate, 'tls.certificate'),
    read(config.key, 'tls.key'),
    config.clientCa ? read(config.clientCa, 'tls.clientCa') : undefined,
  ]);
  return { certificate, key, ...(clientCa ? { clientCa } : {}) };
}

/** What is wrong with the files as a TLS context (OpenSSL's words), or undefined. */
function contextProblem(content: TlsFilesContent): string | undefined {
  try {
    createSecureContext({ cert: content.certificate, key: content.key });
  } catch (e) {
    return `tls.certificate and tls.key do not make a key pair: ${(e as Error).message}`;
  }
  if (content.clientCa) {
    try {
      createSecureContext({ ca: content.clientCa });
    } catch (e) {
      return `tls.clientCa: ${(e as Error).message}`;
    }
  }
  return undefined;
}

function sameContent(a: TlsFilesContent, b: TlsFilesContent): boolean {
  const same = (x?: Buffer, y?: Buffer) => (x === undefined ? y === undefined : y !== undefined && x.equals(y));
  return same(a.certificate, b.certificate) && same(a.key, b.key) && same(a.clientCa, b.clientCa);
}
