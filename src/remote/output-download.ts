import { status as grpcStatus } from '@grpc/grpc-js';
import { rm, symlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeTree, producedFiles, type ProducedFile, type ProducedOutput } from '../actions/index.js';
import { digestKey, digestOf, type reapi, type Digest } from '../core/index.js';
import { renameOverSync, temporaryPathBeside } from './atomic-file-write.js';
import { BlobContentError, createExclusively } from './blob-to-file.js';
import { fileWriterThread } from './file-writer-thread.js';
import { OutputDirectories } from './output-directories.js';
import { isRemoteCallError } from './remote-call-error.js';
import { OutputDownloadError, resultOutputs, type DeclaredOutputKinds, type ResultOutputOptions } from './result-outputs.js';

/** Files of one call written at once, and the bytes they may hold together. */
const FILES_AT_ONCE = 64;
const BYTES_AT_ONCE = 64 * 1024 * 1024;
/** Files up to this size are read whole and written by the file writer thread; larger ones are streamed to their file. */
const THREAD_WRITE_BYTES = 256 * 1024;

/** Where output bytes come from: a remote CAS, the disk cache. */
export interface BlobReader {
  /** The blob's bytes, whole (small files, Tree messages). */
  read(digest: Digest): Promise<Buffer>;
  /** Writes the blob into `file` (open, empty) from position 0, checking its size and hash while streaming. */
  readToFile(digest: Digest, file: FileHandle): Promise<void>;
}

/**
 * Writes outputs under `root`, every directory reached without following a symlink (OutputDirectories):
 * files atomically (a new temporary file beside the path, renamed over it) with their executable bit,
 * trees (whatever was at the path is replaced), and symlinks last, so no write goes through one. Every
 * file is checked against its digest: small ones read whole, at most FILES_AT_ONCE files and
 * BYTES_AT_ONCE bytes at a time (a batching reader sends them in one request), larger ones streamed
 * to their file. The outputs must have passed resultOutputs' checks (or come from this machine).
 */
export async function writeProducedOutputs(outputs: readonly ProducedOutput[], root: string, reader: BlobReader): Promise<void> {
  const directories = new OutputDirectories(root);
  const files: ProducedFile[] = [];
  const symlinks: { path: string; target: string }[] = [];
  for (const output of outputs) {
    if (output.kind === undefined) files.push(output);
    else if (output.kind === 'symlink') symlinks.push(output);
    else {
      await directories.freshDirectory(output.path);
      for (const d of output.tree.directories) await directories.directory(`${output.path}/${d}`);
      for (const f of output.tree.files) files.push({ path: `${output.path}/${f.path}`, digest: f.digest, isExecutable: f.isExecutable });
      for (const l of output.tree.symlinks) symlinks.push({ path: `${output.path}/${l.path}`, target: l.target });
    }
  }
  const write = async (file: ProducedFile) => {
    await directories.parentOf(file.path);
    try {
      await writeOutputFile(join(root, file.path), file, reader);
    } catch (e) {
      // Bytes that are not the blob (here, or as the CAS client found): name the output. Anything else
      // (a blob the server lost, NOT_FOUND, runs the action again) keeps its type.
      if (e instanceof BlobContentError || (isRemoteCallError(e) && e.code === grpcStatus.DATA_LOSS)) {
        throw new OutputDownloadError(`output file '${file.path}': ${(e as Error).message}`, { cause: e });
      }
      throw e;
    }
  };
  for (const group of writeGroups(files)) await Promise.all(group.map(write));
  for (const l of symlinks) {
    await directories.parentOf(l.path);
    const at = join(root, l.path);
    await rm(at, { recursive: true, force: true });
    await symlink(l.target, at);
  }
}

/** Consecutive groups of at most FILES_AT_ONCE files and BYTES_AT_ONCE bytes (a larger file alone). */
function writeGroups(files: readonly ProducedFile[]): ProducedFile[][] {
  const groups: ProducedFile[][] = [];
  let group: ProducedFile[] = [];
  let bytes = 0;
  for (const f of files) {
    if (group.length > 0 && (group.length === FILES_AT_ONCE || bytes + f.digest.sizeBytes > BYTES_AT_ONCE)) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(f);
    bytes += f.digest.sizeBytes;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/**
 * Writes the outputs of an ActionResult under `root` (see `resultOutputs` for the checks, all made
 * before anything is written, and `writeProducedOutputs`): nothing outside `root` is touched.
 * Resolves with the outputs written.
 */
export async function downloadOutputs(
  result: reapi.ActionResult,
  root: string,
  declared: DeclaredOutputKinds,
  reader: BlobReader,
  options: ResultOutputOptions = {},
): Promise<ProducedOutput[]> {
  const outputs = await resultOutputs(result, declared, (d) => reader.read(d), options);
  // Inline contents (a server may send small files in the result) are used as they are.
  const inline = new Map(result.outputFiles.filter((f) => f.contents.length > 0).map((f) => [f.path, Buffer.from(f.contents)]));
  const files = new Map(producedFiles(outputs).map((f) => [digestKey(f.digest), f.path]));
  const read = (digest: Digest) => {
    const data = inline.get(files.get(digestKey(digest)) ?? '');
    return data && digestKey(digestOf(data)) === digestKey(digest)
      ? Promise.resolve(data)
      : digest.sizeBytes === 0
        ? Promise.resolve(Buffer.alloc(0))
        : reader.read(digest);
  };
  await writeProducedOutputs(outputs, root, { read, readToFile: (digest, file) => reader.readToFile(digest, file) });
  return outputs;
}

/**
 * The ActionResult fields describing `outputs` (files, directories by Tree digest, symlinks in
 * `output_symlinks` and, for REAPI 2.0 readers, `output_file_symlinks`), and the blobs they name
 * that are not output files: the Tree messages. File bytes are the caller's to upload.
 */
export function resultFieldsOf(outputs: readonly ProducedOutput[]): { fields: reapi.ActionResultInit; treeBlobs: { digest: Digest; data: Buffer }[] } {
  const treeBlobs: { digest: Digest; data: Buffer }[] = [];
  const outputFiles: reapi.OutputFileInit[] = [];
  const outputDirectories: reapi.OutputDirectoryInit[] = [];
  const outputSymlinks: reapi.OutputSymlinkInit[] = [];
  for (const o of outputs) {
    if (o.kind === undefined) outputFiles.push({ path: o.path, digest: o.digest, isExecutable: o.isExecutable });
    else if (o.kind === 'symlink') outputSymlinks.push({ path: o.path, target: o.target });
    else {
      const encoded = encodeTree(o.tree);
      treeBlobs.push({ digest: encoded.tree.digest, data: Buffer.from(encoded.tree.data) });
      outputDirectories.push({ path: o.path, treeDigest: encoded.tree.digest, rootDirectoryDigest: encoded.rootDigest });
    }
  }
  return {
    fields: {
      outputFiles,
      ...(outputDirectories.length > 0 ? { outputDirectories } : {}),
      ...(outputSymlinks.length > 0 ? { outputSymlinks, outputFileSymlinks: outputSymlinks } : {}),
    },
    treeBlobs,
  };
}

/**
 * Writes one output file atomically (a new temporary file, renamed over whatever is at the path) with
 * or without the executable bit; its parent directory exists. Small files are read whole, checked and
 * handed to the file writer thread: a cache hit writes thousands of them, and creating files is the
 * kernel's slowest work of such a build. Larger ones are streamed into their temporary file.
 */
async function writeOutputFile(path: string, file: ProducedFile, reader: BlobReader): Promise<void> {
  const mode = file.isExecutable ? 0o755 : 0o644;
  if (file.digest.sizeBytes <= THREAD_WRITE_BYTES) {
    const data = await reader.read(file.digest);
    if (digestKey(digestOf(data)) !== digestKey(file.digest)) throw new BlobContentError('the blob does not match its digest');
    return fileWriterThread().write(path, data, mode);
  }
  const temp = temporaryPathBeside(path);
  const handle = await createExclusively(temp, mode);
  try {
    await reader.readToFile(file.digest, handle);
    await handle.chmod(mode); // the umask narrowed the mode open was given
  } catch (e) {
    await handle.close();
    await rm(temp, { force: true });
    throw e;
  }
  await handle.close();
  renameOverSync(temp, path);
}
