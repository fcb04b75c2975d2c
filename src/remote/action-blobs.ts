import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inputFilesOf, type ActionKey, type InputEntry } from '../actions/index.js';
import { digestKey, type Digest } from '../core/index.js';
import type { BlobSource } from './remote-cas.js';

/**
 * Every blob a server needs to run an action: the Action and Command messages, each Directory of
 * the input root and each input file, those inside tree artifacts included (read from `execRoot` at its exec path when it must be sent).
 */
export function actionBlobs(key: ActionKey, inputs: readonly InputEntry[], execRoot: string): BlobSource[] {
  const message = (m: { digest: Digest; data: Uint8Array }): BlobSource => ({ digest: m.digest, data: async () => Buffer.from(m.data) });
  return [
    message(key.action),
    message(key.command),
    ...key.inputTree.directories.map(message),
    ...inputFilesOf(inputs).map((f): BlobSource => ({ digest: f.digest, data: () => readFile(join(execRoot, f.path)) })),
  ];
}

/** The blobs among `blobs` whose digests are in `wanted`. */
export function blobsNamed(blobs: readonly BlobSource[], wanted: readonly Digest[]): BlobSource[] {
  const keys = new Set(wanted.map(digestKey));
  return blobs.filter((b) => keys.has(digestKey(b.digest)));
}
