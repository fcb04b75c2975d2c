import { chmod, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { decodeTree, encodeTree, InvalidTreeError, producedFiles, symlinkEscape, type ProducedFile, type ProducedOutput } from '../actions/index.js';
import { digestKey, digestOf, parseDigest, reapi, type Digest } from '../core/index.js';
import { temporaryPathBeside } from './atomic-file-write.js';
import { fileWriterThread } from './file-writer-thread.js';

/** Files of one call written at once, and the bytes they may hold together. */
const FILES_AT_ONCE = 64;
const BYTES_AT_ONCE = 64 * 1024 * 1024;
/** Files up to this size are written by the file writer thread, larger ones streamed here. */
const THREAD_WRITE_BYTES = 256 * 1024;

/** A regular file an action produced, as written under the root. */
export type DownloadedFile = ProducedFile;

/** A remote result that cannot be written as it is (a path outside the declared outputs, a bad tree). */
export class OutputDownloadError extends Error {}

export interface ResultOutputOptions {
  /** Actions whose outputs are executable (executable genrules, tools) get the bit whatever the server recorded. */
  readonly executable?: boolean;
  /** Declared symlink outputs (`declare_symlink`): kept with any target, never followed. */
  readonly unresolvedSymlinks?: ReadonlySet<string>;
}

/**
 * The outputs an ActionResult names, each checked: only declared outputs at clean relative paths;
 * a directory's Tree is fetched with `read` and decoded (its symlinks must stay inside it); an
 * output symlink must stay inside the output tree unless it is a declared symlink. Nothing is
 * written.
 */
export async function resultOutputs(
  result: reapi.ActionResult,
  declared: ReadonlySet<string>,
  read: (digest: Digest) => Promise<Buffer>,
  options: ResultOutputOptions = {},
): Promise<ProducedOutput[]> {
  const check = (path: string, what: string) => {
    if (!isCleanRelativePath(path)) throw new OutputDownloadError(`the remote result names ${what} '${path}', which is not a clean relative path`);
    if (!declared.has(path)) throw new OutputDownloadError(`the remote result names ${what} '${path}', which the action does not declare`);
  };
  const outputs: ProducedOutput[] = [];
  for (const file of result.outputFiles) {
    check(file.path, 'output file');
    outputs.push({ path: file.path, digest: parseDigest(file.digest, `output_files[${file.path}].digest`), isExecutable: file.isExecutable || options.executable === true });
  }
  for (const dir of result.outputDirectories) {
    check(dir.path, 'output directory');
    const treeDigest = parseDigest(dir.treeDigest, `output_directories[${dir.path}].tree_digest`);
    const data = await read(treeDigest);
    if (digestKey(digestOf(data)) !== digestKey(treeDigest)) throw new OutputDownloadError(`the tree of output directory '${dir.path}' does not match its digest`);
    try {
      outputs.push({ kind: 'tree', path: dir.path, tree: decodeTree(reapi.Tree.decode(data), `output directory '${dir.path}'`) });
    } catch (e) {
      if (e instanceof InvalidTreeError) throw new OutputDownloadError(e.message, { cause: e });
      throw e;
    }
  }
  const seen = new Set<string>();
  // Servers fill output_symlinks and the older output_file_symlinks / output_directory_symlinks alike.
  for (const link of [...result.outputSymlinks, ...result.outputFileSymlinks, ...result.outputDirectorySymlinks]) {
    if (seen.has(link.path)) continue;
    seen.add(link.path);
    check(link.path, 'output symlink');
    if (!options.unresolvedSymlinks?.has(link.path) && !staysInside(link.path, link.target)) {
      throw new OutputDownloadError(`output symlink '${link.path}' points to '${link.target}', outside the output tree`);
    }
    outputs.push({ kind: 'symlink', path: link.path, target: link.target });
  }
  return outputs;
}

/**
 * Writes outputs under `root`: files atomically (temp file + rename) with their executable bit,
 * trees (whatever was at the path is replaced), symlinks. Every file's bytes are checked against
 * its digest. The files' bytes are asked for together (a batching reader sends them in one
 * request), at most FILES_AT_ONCE files and BYTES_AT_ONCE bytes at a time.
 */
export async function writeProducedOutputs(outputs: readonly ProducedOutput[], root: string, read: (digest: Digest) => Promise<Buffer>): Promise<void> {
  const files: ProducedFile[] = [];
  const treeSymlinks: { path: string; target: string }[] = [];
  for (const output of outputs) {
    const at = join(root, output.path);
    if (output.kind === undefined) files.push(output);
    else if (output.kind === 'symlink') {
      await mkdir(dirname(at), { recursive: true });
      await rm(at, { recursive: true, force: true });
      await symlink(output.target, at);
    } else {
      await rm(at, { recursive: true, force: true });
      await mkdir(at, { recursive: true });
      for (const d of output.tree.directories) await mkdir(join(at, d), { recursive: true });
      for (const f of output.tree.files) files.push({ path: `${output.path}/${f.path}`, digest: f.digest, isExecutable: f.isExecutable });
      for (const l of output.tree.symlinks) treeSymlinks.push({ path: `${output.path}/${l.path}`, target: l.target });
    }
  }
  const writeChecked = async (file: ProducedFile) => {
    const data = await read(file.digest);
    if (digestKey(digestOf(data)) !== digestKey(file.digest)) throw new OutputDownloadError(`output file '${file.path}' does not match its digest`);
    await writeOutputFile(join(root, file.path), data, file.isExecutable);
  };
  for (const group of writeGroups(files)) await Promise.all(group.map(writeChecked));
  for (const l of treeSymlinks) await symlink(l.target, join(root, l.path));
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
 * Writes the outputs of an ActionResult under `root` (see `resultOutputs` for the checks, and
 * `writeProducedOutputs`): nothing outside `root` is touched. Resolves with the outputs written.
 */
export async function downloadOutputs(
  result: reapi.ActionResult,
  root: string,
  declared: ReadonlySet<string>,
  read: (digest: Digest) => Promise<Buffer>,
  options: ResultOutputOptions = {},
): Promise<ProducedOutput[]> {
  const outputs = await resultOutputs(result, declared, read, options);
  // Inline contents (a server may send small files in the result) are used as they are.
  const inline = new Map(result.outputFiles.filter((f) => f.contents.length > 0).map((f) => [f.path, Buffer.from(f.contents)]));
  const files = new Map(producedFiles(outputs).map((f) => [digestKey(f.digest), f.path]));
  const readInline = (digest: Digest) => {
    const data = inline.get(files.get(digestKey(digest)) ?? '');
    return data && digestKey(digestOf(data)) === digestKey(digest) ? Promise.resolve(data) : digest.sizeBytes === 0 ? Promise.resolve(Buffer.alloc(0)) : read(digest);
  };
  await writeProducedOutputs(outputs, root, readInline);
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
 * Writes one output file atomically (temp file + rename over whatever is at the path) with or
 * without the executable bit. Small files go to the file writer thread: a cache hit writes
 * thousands of them, and creating files is the kernel's slowest work of such a build.
 */
export async function writeOutputFile(path: string, data: Buffer, executable: boolean): Promise<void> {
  const mode = executable ? 0o755 : 0o644;
  if (data.length <= THREAD_WRITE_BYTES) return fileWriterThread().write(path, data, mode);
  const temp = temporaryPathBeside(path);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(temp, data);
  await chmod(temp, mode);
  await rm(path, { recursive: true, force: true });
  await rename(temp, path);
}

/** `/`-separated, relative, no empty, `.` or `..` segments. */
export function isCleanRelativePath(path: string): boolean {
  return path !== '' && !path.startsWith('/') && !path.includes('\0') && path.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/** A relative symlink target that, resolved from the link's directory, stays under the root. */
function staysInside(linkPath: string, target: string): boolean {
  return target !== '' && symlinkEscape(linkPath, target) === undefined;
}
