import { digestKey, encodeMessage, reapi, type Digest, type EncodedMessage } from '../core/index.js';
import { compareUtf8 } from './input-tree.js';

/** A regular file inside a tree artifact, at a `/`-separated path relative to the tree. */
export interface TreeFile {
  readonly path: string;
  readonly digest: Digest;
  readonly isExecutable: boolean;
}

/** A symlink inside a tree artifact; its target stays inside the tree (checked when collected). */
export interface TreeSymlink {
  readonly path: string;
  readonly target: string;
}

/** What a tree artifact holds: its files, its symlinks and every directory below it (empty ones too). */
export interface TreeContents {
  readonly files: readonly TreeFile[];
  readonly symlinks: readonly TreeSymlink[];
  readonly directories: readonly string[];
}

/**
 * What an action produced at one declared output path: a file, a directory (tree artifact) or a
 * symlink. The caches store these, and dependents are keyed by them.
 */
export type ProducedOutput = ProducedFile | ProducedTree | ProducedSymlink;

/** What an action declares at an output path: a file, a directory (tree artifact) or a symlink (`declare_symlink`). */
export type OutputKind = 'file' | 'directory' | 'symlink';

export interface ProducedFile {
  readonly kind?: undefined;
  readonly path: string;
  readonly digest: Digest;
  readonly isExecutable: boolean;
}

export interface ProducedTree {
  readonly kind: 'tree';
  readonly path: string;
  readonly tree: TreeContents;
}

export interface ProducedSymlink {
  readonly kind: 'symlink';
  readonly path: string;
  readonly target: string;
}

/** Every regular file of `outputs`, those inside trees included, at its exec path. */
export function producedFiles(outputs: readonly ProducedOutput[]): ProducedFile[] {
  const files: ProducedFile[] = [];
  for (const o of outputs) {
    if (o.kind === undefined) files.push(o);
    else if (o.kind === 'tree') for (const f of o.tree.files) files.push({ path: `${o.path}/${f.path}`, digest: f.digest, isExecutable: f.isExecutable });
  }
  return files;
}

/** A tree's contents as REAPI's `Tree` message (canonical Directory messages) and its root Directory. */
export interface EncodedTree {
  readonly tree: EncodedMessage;
  readonly rootDigest: Digest;
}

interface DirNode {
  readonly files: TreeFile[];
  readonly symlinks: TreeSymlink[];
  readonly dirs: Map<string, DirNode>;
}

/**
 * Encodes a tree as Bazel's disk and remote caches store it: `Tree.root` and each distinct child
 * Directory once, entries sorted by their UTF-8 names, so equal contents give equal digests.
 */
export function encodeTree(contents: TreeContents): EncodedTree {
  const root: DirNode = { files: [], symlinks: [], dirs: new Map() };
  const nodeAt = (path: string): DirNode => {
    let node = root;
    for (const part of path === '' ? [] : path.split('/')) {
      let child = node.dirs.get(part);
      if (!child) node.dirs.set(part, (child = { files: [], symlinks: [], dirs: new Map() }));
      node = child;
    }
    return node;
  };
  const split = (path: string) => ({ dir: path.slice(0, Math.max(0, path.lastIndexOf('/'))), name: path.slice(path.lastIndexOf('/') + 1) });
  for (const d of contents.directories) nodeAt(d);
  for (const f of contents.files) nodeAt(split(f.path).dir).files.push({ ...f, path: split(f.path).name });
  for (const l of contents.symlinks) nodeAt(split(l.path).dir).symlinks.push({ ...l, path: split(l.path).name });
  const children = new Map<string, reapi.DirectoryInit>();
  const encode = (node: DirNode): { message: reapi.DirectoryInit; digest: Digest } => {
    const message: reapi.DirectoryInit = {
      files: [...node.files].sort((a, b) => compareUtf8(a.path, b.path)).map((f) => ({ name: f.path, digest: f.digest, isExecutable: f.isExecutable })),
      directories: [...node.dirs.keys()].sort(compareUtf8).map((name) => {
        const child = encode(node.dirs.get(name)!);
        children.set(digestKey(child.digest), child.message);
        return { name, digest: child.digest };
      }),
      symlinks: [...node.symlinks].sort((a, b) => compareUtf8(a.path, b.path)).map((l) => ({ name: l.path, target: l.target })),
    };
    return { message, digest: encodeMessage(reapi.Directory, message).digest };
  };
  const top = encode(root);
  const tree = encodeMessage(reapi.Tree, { root: top.message, children: [...children.values()] });
  return { tree, rootDigest: top.digest };
}

/**
 * Why a symlink at `path` (relative to a tree's root) with `target` leaves the tree, in Bazel's
 * words; undefined when it stays inside (relative, resolving below the root).
 */
export function symlinkEscape(path: string, target: string): string | undefined {
  if (target.startsWith('/')) return `is an absolute symlink to '${target}'`;
  const parts: string[] = path.split('/').slice(0, -1);
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part !== '..') parts.push(part);
    else if (parts.pop() === undefined) return `points to '${target}', outside the tree artifact`;
  }
  return undefined;
}
