import { digestKey, digestOf, parseDigest, reapi, type Digest } from '../core/index.js';
import { symlinkEscape, type TreeContents, type TreeFile, type TreeSymlink } from './produced-output.js';

/** A Tree message that cannot describe a directory (a missing child, a bad or repeated name, a symlink leaving it, too large). */
export class InvalidTreeError extends Error {}

/**
 * Bounds on what one Tree may expand to, far above real tree artifacts (the largest we know hold some
 * 100,000 files) and low enough that the expanded lists fit a default heap: a Tree names each distinct
 * Directory once, so a few KB whose directories reference the same child twice per level describe 2^26
 * paths. Counted over the distinct Directories before anything is expanded.
 */
export const MAX_TREE_FILES = 1_000_000;
export const MAX_TREE_DIRECTORIES = 250_000;
/** Files plus symlinks plus directories: what the expanded lists hold. */
export const MAX_TREE_ENTRIES = 1_000_000;
/** Directory levels below the tree's root (a deeper real tree would hit PATH_MAX first). */
export const MAX_TREE_DEPTH = 256;
/** The files' bytes together: what writing the tree would put on disk. */
export const MAX_TREE_BYTES = 256 * 1024 ** 3;
/** A Tree message itself is read whole; 1,000,000 entries take some 100 MB. */
export const MAX_TREE_MESSAGE_BYTES = 256 * 1024 * 1024;
/** Symlinks followed while resolving one symlink of a tree: Linux's own limit (MAXSYMLINKS). */
const MAX_SYMLINK_HOPS = 40;

interface Size {
  files: number;
  directories: number;
  entries: number;
  bytes: number;
  /** Levels below this directory. */
  depth: number;
}

/**
 * The contents a `Tree` message describes; `where` names it in errors. Checked before anything is
 * expanded: every child Directory present, names single path components and unique within their
 * Directory (a file and a directory of one name too), the expanded size within the MAX_TREE_* bounds.
 * Then every symlink must stay inside the tree, followed through the tree's other symlinks as the
 * kernel would (`a -> ..` inside `sub/` is fine alone, but `b -> sub/a/..` leaves the tree).
 */
export function decodeTree(tree: reapi.Tree, where: string): TreeContents {
  if (!tree.root) throw new InvalidTreeError(`the tree of ${where} has no root`);
  const children = new Map(tree.children.map((d) => [digestKey(digestOf(Buffer.from(reapi.Directory.encode(d)))), d]));
  const childOf = (node: reapi.DirectoryNode, path: string): reapi.Directory => {
    const child = children.get(digestKey(treeDigest(node.digest, where, path)));
    if (!child) throw new InvalidTreeError(`the tree of ${where} lacks the directory '${path}'`);
    return child;
  };
  checkSize(sizeOf(tree.root, '', childOf, where, new Map()), where);
  const contents = expand(tree.root, childOf, where);
  checkSymlinks(contents, where);
  return contents;
}

/** The expanded size below `dir`, each distinct Directory counted once (`memo` by the Directory object). */
function sizeOf(
  dir: reapi.Directory,
  path: string,
  childOf: (node: reapi.DirectoryNode, path: string) => reapi.Directory,
  where: string,
  memo: Map<reapi.Directory, Size>,
): Size {
  const known = memo.get(dir);
  if (known) return known;
  const names = new Set<string>();
  const name = (n: string) => {
    checkName(n, path, where);
    if (names.has(n)) throw new InvalidTreeError(`${where} holds two entries named '${join(path, n)}'`);
    names.add(n);
    return join(path, n);
  };
  const size: Size = {
    files: dir.files.length,
    directories: dir.directories.length,
    entries: dir.files.length + dir.symlinks.length + dir.directories.length,
    bytes: 0,
    depth: 0,
  };
  for (const f of dir.files) size.bytes += treeDigest(f.digest, where, name(f.name)).sizeBytes;
  for (const l of dir.symlinks) name(l.name);
  for (const d of dir.directories) {
    const childPath = name(d.name);
    // Depth first: it bounds this recursion, and a Tree cannot be cyclic (a Directory would name its own digest).
    if (childPath.split('/').length > MAX_TREE_DEPTH) throw new InvalidTreeError(`${where} is nested more than ${MAX_TREE_DEPTH} levels deep`);
    const child = sizeOf(childOf(d, childPath), childPath, childOf, where, memo);
    // A Directory counted before at a shallower path is not walked again: its own depth says how deep it goes here.
    if (childPath.split('/').length + child.depth > MAX_TREE_DEPTH) throw new InvalidTreeError(`${where} is nested more than ${MAX_TREE_DEPTH} levels deep`);
    size.files += child.files;
    size.directories += child.directories;
    size.entries += child.entries;
    size.bytes += child.bytes;
    size.depth = Math.max(size.depth, child.depth + 1);
  }
  memo.set(dir, size);
  return size;
}

function checkSize(size: Size, where: string): void {
  const over = (what: string, count: number, bound: number) => {
    if (count > bound) throw new InvalidTreeError(`${where} expands to ${count} ${what}, more than the ${bound} a tree may hold`);
  };
  over('files', size.files, MAX_TREE_FILES);
  over('directories', size.directories, MAX_TREE_DIRECTORIES);
  over('entries', size.entries, MAX_TREE_ENTRIES);
  over('bytes of files', size.bytes, MAX_TREE_BYTES);
}

/** The tree's entries at their paths; only called once the size is known to be bounded. */
function expand(root: reapi.Directory, childOf: (node: reapi.DirectoryNode, path: string) => reapi.Directory, where: string): TreeContents {
  const files: TreeFile[] = [];
  const symlinks: TreeSymlink[] = [];
  const directories: string[] = [];
  const visit = (dir: reapi.Directory, prefix: string) => {
    for (const f of dir.files) {
      const path = join(prefix, f.name);
      files.push({ path, digest: treeDigest(f.digest, where, path), isExecutable: f.isExecutable });
    }
    for (const l of dir.symlinks) symlinks.push({ path: join(prefix, l.name), target: l.target });
    for (const d of dir.directories) {
      const path = join(prefix, d.name);
      directories.push(path);
      visit(childOf(d, path), path);
    }
  };
  visit(root, '');
  return { files, symlinks, directories };
}

/** Every symlink resolves inside the tree, also when its target passes through other symlinks of the tree. */
function checkSymlinks(contents: TreeContents, where: string): void {
  if (contents.symlinks.length === 0) return;
  const links = new Map(contents.symlinks.map((l) => [l.path, l.target]));
  for (const link of contents.symlinks) {
    const escape = symlinkEscape(link.path, link.target) ?? chainedEscape(link, links);
    if (escape) throw new InvalidTreeError(`${where}: symlink '${link.path}' ${escape}`);
  }
}

/**
 * Why `link`, resolved component by component through the tree's symlinks, leaves the tree; undefined
 * when it stays inside. A component that names no symlink is taken as it is (a file or directory of the
 * tree, or nothing: a dangling link is allowed, as Bazel allows it).
 */
function chainedEscape(link: TreeSymlink, links: ReadonlyMap<string, string>): string | undefined {
  const at: string[] = link.path.split('/').slice(0, -1);
  const pending = link.target.split('/');
  let hops = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (at.pop() === undefined) return `points to '${link.target}', which leaves the tree artifact through its other symlinks`;
      continue;
    }
    at.push(part);
    const target = links.get(at.join('/'));
    if (target === undefined) continue;
    if (++hops > MAX_SYMLINK_HOPS) return `points to '${link.target}' through more than ${MAX_SYMLINK_HOPS} symlinks`;
    // Checked on its own already; an absolute one never gets here.
    at.pop();
    pending.unshift(...target.split('/'));
  }
  return undefined;
}

function checkName(name: string, path: string, where: string): void {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new InvalidTreeError(`${where} holds an entry named '${name}'${path === '' ? '' : ` in '${path}'`}`);
  }
}

function treeDigest(digest: reapi.Digest | null | undefined, where: string, path: string): Digest {
  try {
    return parseDigest(digest, `${where}/${path}`);
  } catch (e) {
    throw new InvalidTreeError((e as Error).message, { cause: e });
  }
}

const join = (prefix: string, name: string) => (prefix === '' ? name : `${prefix}/${name}`);
