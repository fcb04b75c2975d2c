import { join } from 'node:path';
import { producedFiles, type Action, type ProducedOutput } from '../actions/index.js';
import { writeProducedOutputs, type ActionIdentity, type BlobReader, type RemoteClient } from '../remote/index.js';
import type { FileDigestCache } from './file-digest-cache.js';
import { outputOnDisk } from './outputs-on-disk.js';

/** The remote CAS as the reader of an action's outputs. */
export function remoteBlobReader(client: RemoteClient, action?: ActionIdentity): BlobReader {
  return { read: (digest) => client.read(digest, action), readToFile: (digest, file) => client.readToFile(digest, file, action) };
}

/** `--remote_download_outputs`: which outputs of remote actions come to this machine. */
export type DownloadMode = 'all' | 'toplevel' | 'minimal';

/**
 * Builds without the bytes: with `toplevel` only the outputs of the requested targets are written
 * into the execroot, with `minimal` none. An output left on the server is known by its digest (a
 * tree by its Tree message, so dependents' keys need no file); an action that runs here and reads
 * one downloads it first (a tree whole, each file checked against its digest).
 */
export class RemoteOutputs {
  /** Exec path → outputs left on the server in this build. */
  private readonly remote = new Map<string, ProducedOutput>();
  private readonly fetching = new Map<string, Promise<void>>();

  constructor(
    private readonly client: RemoteClient,
    private readonly execRoot: string,
    private readonly digestCache: FileDigestCache,
    private readonly mode: DownloadMode,
    /** Exec paths of the requested targets' outputs. */
    private readonly topLevel: ReadonlySet<string>,
  ) {}

  /** Whether a remote action's outputs are written into the execroot: always a test's (its log, XML and status are read here). */
  wanted(action: Action): boolean {
    if (this.mode === 'all' || action.exitCodeIsResult) return true;
    return this.mode === 'toplevel' && action.outputs.some((o) => this.topLevel.has(o.execPath));
  }

  leftRemote(outputs: readonly ProducedOutput[]): void {
    for (const o of outputs) this.remote.set(o.path, o);
  }

  /** Downloads the inputs of `action` that were left on the server (each once), before it runs here. */
  async fetchInputs(action: Action): Promise<void> {
    await Promise.all(
      action.inputs.map((input) => {
        const output = this.remote.get(input.execPath);
        return output ? this.fetchOnce(output) : undefined;
      }),
    );
  }

  /** Downloads outputs an earlier build left on the server that this build wants here. */
  async fetchOutputs(outputs: readonly ProducedOutput[]): Promise<void> {
    await Promise.all(outputs.map((o) => this.fetchOnce(o)));
  }

  private fetchOnce(output: ProducedOutput): Promise<void> {
    let pending = this.fetching.get(output.path);
    if (!pending) {
      pending = this.fetch(output).then(() => void this.remote.delete(output.path));
      this.fetching.set(output.path, pending);
    }
    return pending;
  }

  private async fetch(output: ProducedOutput): Promise<void> {
    // An earlier fetch (an earlier build's) may have brought it already.
    if (await outputOnDisk(output, this.execRoot, this.digestCache)) return;
    await writeProducedOutputs([output], this.execRoot, remoteBlobReader(this.client));
    for (const f of producedFiles([output])) await this.digestCache.remember(join(this.execRoot, f.path), f.digest);
  }
}
