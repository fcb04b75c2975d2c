import { decodeTree, InvalidTreeError, MAX_TREE_MESSAGE_BYTES, type OutputKind, type ProducedOutput } from '../actions/index.js';
import { digestKey, digestOf, parseDigest, reapi, type Digest } from '../core/index.js';

/** A result that cannot be written as it is (a path outside the declared outputs, a kind the action did not declare, a bad tree, a blob that does not match). */
export class OutputDownloadError extends Error {}

/** An action's declared outputs: exec path → kind. */
export type DeclaredOutputKinds = ReadonlyMap<string, OutputKind>;

export interface ResultOutputOptions {
  /** Actions whose outputs are executable (executable genrules, tools) get the bit whatever the server recorded. */
  readonly executable?: boolean;
}

/**
 * The outputs an ActionResult names, every one checked before anything is written: a clean relative
 * path the action declared, with the kind it declared (a file in output_files, a directory in
 * output_directories, a symlink in the symlink fields), each path once (a symlink may repeat in
 * output_symlinks and the older output_file_symlinks / output_directory_symlinks with the same
 * target), no output below another. A directory's Tree is fetched with `read` and decoded within
 * decodeTree's bounds. A declared symlink keeps its target whatever it is: it is created last and
 * never followed. Throws OutputDownloadError naming the path.
 */
export async function resultOutputs(
  result: reapi.ActionResult,
  declared: DeclaredOutputKinds,
  read: (digest: Digest) => Promise<Buffer>,
  options: ResultOutputOptions = {},
): Promise<ProducedOutput[]> {
  const named = new Map<string, { kind: OutputKind; target?: string }>();
  const claim = (path: string, kind: OutputKind, field: string, target?: string): boolean => {
    if (!isCleanRelativePath(path)) throw new OutputDownloadError(`the result names ${field} '${path}', which is not a clean relative path`);
    const expected = declared.get(path);
    if (expected === undefined) throw new OutputDownloadError(`the result names ${field} '${path}', which the action does not declare`);
    if (expected !== kind) throw new OutputDownloadError(`the result names ${field} '${path}', which the action declares as a ${expected}`);
    const earlier = named.get(path);
    if (earlier === undefined) {
      named.set(path, { kind, ...(target !== undefined ? { target } : {}) });
      return true;
    }
    // Servers fill output_symlinks and the legacy fields alike: the same link twice is one output.
    if (kind === 'symlink' && earlier.kind === 'symlink' && earlier.target === target) return false;
    throw new OutputDownloadError(`the result names '${path}' twice, as different outputs`);
  };
  const outputs: ProducedOutput[] = [];
  for (const file of result.outputFiles) {
    if (!claim(file.path, 'file', 'output file')) continue;
    outputs.push({
      path: file.path,
      digest: resultDigest(file.digest, `output_files[${file.path}].digest`),
      isExecutable: file.isExecutable || options.executable === true,
    });
  }
  const directories = result.outputDirectories.filter((dir) => claim(dir.path, 'directory', 'output directory'));
  for (const link of [...result.outputSymlinks, ...result.outputFileSymlinks, ...result.outputDirectorySymlinks]) {
    if (claim(link.path, 'symlink', 'output symlink', link.target)) outputs.push({ kind: 'symlink', path: link.path, target: link.target });
  }
  checkNoneBelowAnother([...named.keys()]);
  // Trees last: every cheaper check is done before a Tree blob is fetched.
  for (const dir of directories) outputs.push({ kind: 'tree', path: dir.path, tree: await fetchTree(dir, read) });
  return outputs;
}

async function fetchTree(dir: reapi.OutputDirectory, read: (digest: Digest) => Promise<Buffer>) {
  const treeDigest = resultDigest(dir.treeDigest, `output_directories[${dir.path}].tree_digest`);
  if (treeDigest.sizeBytes > MAX_TREE_MESSAGE_BYTES) {
    throw new OutputDownloadError(
      `the tree of output directory '${dir.path}' is ${treeDigest.sizeBytes} bytes, more than the ${MAX_TREE_MESSAGE_BYTES} a Tree may be`,
    );
  }
  const data = await read(treeDigest);
  if (digestKey(digestOf(data)) !== digestKey(treeDigest))
    throw new OutputDownloadError(`the tree of output directory '${dir.path}' does not match its digest`);
  try {
    return decodeTree(reapi.Tree.decode(data), `output directory '${dir.path}'`);
  } catch (e) {
    if (e instanceof InvalidTreeError) throw new OutputDownloadError(e.message, { cause: e });
    throw new OutputDownloadError(`the tree of output directory '${dir.path}' cannot be decoded: ${(e as Error).message}`, { cause: e });
  }
}

/** An output below another (`a` and `a/b`) would be written into or through it. */
function checkNoneBelowAnother(paths: readonly string[]): void {
  const all = new Set(paths);
  for (const path of paths) {
    for (let slash = path.indexOf('/'); slash !== -1; slash = path.indexOf('/', slash + 1)) {
      const above = path.slice(0, slash);
      if (all.has(above)) throw new OutputDownloadError(`the result names '${path}' inside the output '${above}'`);
    }
  }
}

function resultDigest(digest: reapi.Digest | null | undefined, field: string): Digest {
  try {
    return parseDigest(digest, field);
  } catch (e) {
    throw new OutputDownloadError((e as Error).message, { cause: e });
  }
}

/** `/`-separated, relative, no empty, `.` or `..` segments. */
export function isCleanRelativePath(path: string): boolean {
  return path !== '' && !path.startsWith('/') && !path.includes('\0') && path.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}
