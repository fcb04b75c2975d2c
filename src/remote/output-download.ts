import { chmod, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { digestKey, digestOf, parseDigest, reapi, type Digest } from '../core/index.js';

/** A regular file an action produced, as written under the root. */
export interface DownloadedFile {
  readonly path: string;
  readonly digest: Digest;
  readonly isExecutable: boolean;
}

/** A remote result that cannot be written as it is (a path outside the declared outputs, a bad tree). */
export class OutputDownloadError extends Error {}

/**
 * Writes the outputs of an ActionResult under `root`: files (each atomically, temp file + rename,
 * with its executable bit), directories (from their Tree, every file checked against its digest by
 * `read`) and symlinks. Only the declared outputs may be written: a path that is not one of them,
 * that is not a clean relative path, or a symlink whose target is absolute or leaves its directory's
 * tree, fails the download and nothing outside `root` is touched.
 */
export async function downloadOutputs(
  result: reapi.ActionResult,
  root: string,
  declared: ReadonlySet<string>,
  read: (digest: Digest) => Promise<Buffer>,
  options: { readonly executable?: boolean } = {},
): Promise<DownloadedFile[]> {
  // Actions whose outputs are executable (executable genrules, tools) get the bit whatever the server recorded.
  const executableBit = (recorded: boolean) => recorded || options.executable === true;
  const check = (path: string, what: string) => {
    if (!isCleanRelativePath(path)) throw new OutputDownloadError(`the remote result names ${what} '${path}', which is not a clean relative path`);
    if (!declared.has(path)) throw new OutputDownloadError(`the remote result names ${what} '${path}', which the action does not declare`);
  };
  const files: DownloadedFile[] = [];
  for (const file of result.outputFiles) {
    check(file.path, 'output file');
    const digest = parseDigest(file.digest, `output_files[${file.path}].digest`);
    const data = file.contents.length > 0 || digest.sizeBytes === 0 ? Buffer.from(file.contents) : await read(digest);
    if (digestKey(digestOf(data)) !== digestKey(digest)) throw new OutputDownloadError(`output file '${file.path}' does not match its digest`);
    await writeOutputFile(join(root, file.path), data, executableBit(file.isExecutable));
    files.push({ path: file.path, digest, isExecutable: executableBit(file.isExecutable) });
  }
  for (const dir of result.outputDirectories) {
    check(dir.path, 'output directory');
    const treeDigest = parseDigest(dir.treeDigest, `output_directories[${dir.path}].tree_digest`);
    const tree = reapi.Tree.decode(await read(treeDigest));
    if (!tree.root) throw new OutputDownloadError(`the tree of output directory '${dir.path}' has no root`);
    const children = new Map(tree.children.map((d) => [digestKey(digestOf(Buffer.from(reapi.Directory.encode(d)))), d]));
    await rm(join(root, dir.path), { recursive: true, force: true });
    await writeDirectory(tree.root, dir.path, root, children, read, files, 0);
  }
  for (const link of [...result.outputSymlinks, ...result.outputFileSymlinks, ...result.outputDirectorySymlinks]) {
    check(link.path, 'output symlink');
    if (!staysInside(link.path, link.target)) throw new OutputDownloadError(`output symlink '${link.path}' points to '${link.target}', outside the output tree`);
    const path = join(root, link.path);
    await mkdir(dirname(path), { recursive: true });
    await rm(path, { recursive: true, force: true });
    await symlink(link.target, path);
  }
  return files;
}

/**
 * The output files of an ActionResult as the server lists them, checked as `downloadOutputs` checks
 * them, without fetching anything; undefined when the result has directories or symlinks (those
 * are only known once downloaded).
 */
export function listedOutputFiles(result: reapi.ActionResult, declared: ReadonlySet<string>, options: { readonly executable?: boolean } = {}): DownloadedFile[] | undefined {
  if (result.outputDirectories.length + result.outputSymlinks.length + result.outputFileSymlinks.length + result.outputDirectorySymlinks.length > 0) return undefined;
  return result.outputFiles.map((file) => {
    if (!isCleanRelativePath(file.path) || !declared.has(file.path)) throw new OutputDownloadError(`the remote result names output file '${file.path}', which the action does not declare`);
    return { path: file.path, digest: parseDigest(file.digest, `output_files[${file.path}].digest`), isExecutable: file.isExecutable || options.executable === true };
  });
}

const MAX_TREE_DEPTH = 256;

async function writeDirectory(
  directory: reapi.Directory,
  path: string,
  root: string,
  children: ReadonlyMap<string, reapi.Directory>,
  read: (digest: Digest) => Promise<Buffer>,
  files: DownloadedFile[],
  depth: number,
): Promise<void> {
  if (depth > MAX_TREE_DEPTH) throw new OutputDownloadError(`output directory '${path}' is nested too deeply`);
  await mkdir(join(root, path), { recursive: true });
  const name = (n: string) => {
    if (n === '' || n === '.' || n === '..' || n.includes('/') || n.includes('\0')) throw new OutputDownloadError(`output directory '${path}' holds an entry named '${n}'`);
    return `${path}/${n}`;
  };
  for (const file of directory.files) {
    const at = name(file.name);
    const digest = parseDigest(file.digest, `${at}.digest`);
    const data = await read(digest);
    await writeOutputFile(join(root, at), data, file.isExecutable);
    files.push({ path: at, digest, isExecutable: file.isExecutable });
  }
  for (const link of directory.symlinks) {
    const at = name(link.name);
    if (!staysInside(at, link.target)) throw new OutputDownloadError(`output symlink '${at}' points to '${link.target}', outside the output tree`);
    await symlink(link.target, join(root, at));
  }
  for (const sub of directory.directories) {
    const at = name(sub.name);
    const child = children.get(digestKey(parseDigest(sub.digest, `${at}.digest`)));
    if (!child) throw new OutputDownloadError(`the tree of '${path}' lacks the directory '${at}'`);
    await writeDirectory(child, at, root, children, read, files, depth + 1);
  }
}

/** Writes one output file atomically (temp file + rename) with or without the executable bit. */
export async function writeOutputFile(path: string, data: Buffer, executable: boolean): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.kiln-download-${process.pid}`;
  await writeFile(temp, data);
  await chmod(temp, executable ? 0o755 : 0o644);
  await rm(path, { recursive: true, force: true });
  await rename(temp, path);
}

/** `/`-separated, relative, no empty, `.` or `..` segments. */
export function isCleanRelativePath(path: string): boolean {
  return path !== '' && !path.startsWith('/') && !path.includes('\0') && path.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/** A relative symlink target that, resolved from the link's directory, stays under the root. */
function staysInside(linkPath: string, target: string): boolean {
  if (target === '' || target.startsWith('/')) return false;
  const resolved = posix.normalize(posix.join(posix.dirname(linkPath), target));
  return resolved !== '..' && !resolved.startsWith('../');
}
