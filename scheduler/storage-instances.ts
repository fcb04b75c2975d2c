import { InvalidArgumentError, reapi, systemClock } from '../src/core/index.js';
import {
  backendsOf,
  createBlobAccess,
  BlobPins,
  MetricsBlobAccess,
  PinningBlobAccess,
  type BlobAccessMetrics,
  VerifyingBlobAccess,
  type BlobAccess,
  type BlobAccessConfig,
  type BlobAccessLogger,
} from '../src/core/blobstore/index.js';
import type { InstanceStorageConfig } from './cache-server-config.js';
import { checkInstanceName, quotedName } from './instance-name.js';
import { RemoteStorage } from '../src/remote/index.js';

/** How long a blob a client was told exists (or stored) is kept from eviction: longer than a build. */
export const DEFAULT_PIN_TTL_MS = 60 * 60 * 1000;

/** The stores behind one instance name. */
interface InstanceStorage {
  readonly name: string;
  /** Content-addressable storage; always verifies content against digests. */
  readonly cas: BlobAccess;
  /** Action digest to serialized ActionResult; completeness-checked when so configured. */
  readonly actionCache: BlobAccess;
  /** UpdateActionResult checks that the result's blobs are in `cas` (not on a storage node, whose CAS holds one shard). */
  readonly checkActionResultReferences: boolean;
}

/**
 * Every instance the server serves, looked up by the instance name of a request. Requests for an
 * instance name with a reserved segment, or one that is not configured, are INVALID_ARGUMENT.
 */
export class StorageInstances {
  private constructor(
    private readonly byName: ReadonlyMap<string, InstanceStorage>,
    private readonly remote: RemoteStorage,
  ) {}

  /**
   * Opens the stores of each instance (disk stores rebuild their index). A CAS whose config has no
   * `verifying` layer gets one on the outside (unless all its storage is remote: see verifiesContent), so
   * no unverified blob ever enters or leaves the server. `grpc` backends connect to their storage nodes.
   */
  static async open(
    configs: readonly InstanceStorageConfig[],
    logger?: BlobAccessLogger,
    metrics?: BlobAccessMetrics,
    pinTtlMs = DEFAULT_PIN_TTL_MS,
  ): Promise<StorageInstances> {
    const byName = new Map<string, InstanceStorage>();
    const remote = new RemoteStorage();
    try {
      for (const config of configs) {
        const where = config.name === '' ? 'instance ""' : `instance ${JSON.stringify(config.name)}`;
        const deps = { ...(logger ? { logger } : {}), ...(metrics ? { metrics } : {}), connectRemote: remote.connect };
        // What clients were told exists, and what was just stored, stays for a build's lifetime (see PinningBlobAccess).
        const pins = new BlobPins(systemClock, pinTtlMs);
        const built = await createBlobAccess(config.cas, { ...deps, storage: 'cas', pins }, `${where}.cas`);
        const verified = new PinningBlobAccess(verifiesContent(config.cas) ? built : new VerifyingBlobAccess(built, deps), pins);
        // The whole stack as the services see it (backend "instance"): its lookups are the hits and misses clients
        // see (the action cache's completeness check reads the CAS beneath it, so it is not counted there).
        const cas = metrics ? new MetricsBlobAccess(verified, metrics, 'instance', 'cas') : verified;
        const stack = await createBlobAccess(config.actionCache, { ...deps, storage: 'ac', contentAddressableStorage: verified }, `${where}.actionCache`);
        const actionCache = metrics ? new MetricsBlobAccess(stack, metrics, 'instance', 'ac') : stack;
        byName.set(config.name, { name: config.name, cas, actionCache, checkActionResultReferences: config.checkActionResultReferences ?? true });
      }
    } catch (e) {
      remote.close();
      throw e;
    }
    return new StorageInstances(byName, remote);
  }

  /** Closes the connections to storage nodes. */
  close(): void {
    this.remote.close();
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  /**
   * The instance a request names.
   * @throws InvalidArgumentError naming `field` for a reserved segment or an unknown instance
   */
  get(name: string, field = 'instance_name'): InstanceStorage {
    checkInstanceName(name, field);
    const instance = this.byName.get(name);
    if (!instance) {
      const known = this.names.map((n) => JSON.stringify(n)).join(', ');
      throw new InvalidArgumentError(`${field}: unknown instance name ${quotedName(name)} (this server serves ${known})`);
    }
    return instance;
  }
}

/**
 * Whether a CAS stack checks content itself: it has a `verifying` layer, or every store under it is
 * a storage node (`grpc`), whose own CAS verifies what it stores and serves, and whose every read
 * Kiln's client checks against its digest. A verifying layer in front of nodes would read every blob
 * it has not seen in this process again before saying it is present.
 */
function verifiesContent(config: BlobAccessConfig): boolean {
  if (config.kind === 'verifying' || config.kind === 'grpc') return true;
  const backends = backendsOf(config);
  return backends.length > 0 && backends.every(verifiesContent);
}

/**
 * Checks a request's digest_function: unset (inferred from the hash length) or SHA256, the only one
 * this server advertises.
 * @throws InvalidArgumentError naming the field
 */
export function checkDigestFunction(value: reapi.DigestFunction_Value | undefined, field = 'digest_function'): void {
  if (value === undefined || value === reapi.DigestFunction_Value.UNKNOWN || value === reapi.DigestFunction_Value.SHA256) return;
  const name = reapi.DigestFunction_Value[value] ?? String(value);
  throw new InvalidArgumentError(`${field}: digest function ${name} is not supported; this server uses SHA256 only`);
}
