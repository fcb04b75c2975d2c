import { encodedBytes, encodeDirectory, type Digest, type DirectoryFields, type EncodedMessage } from '../core/index.js';

/** One file of an input root, at a `/`-separated path relative to the root. */
export interface InputFile {
  readonly kind?: undefined;
  readonly path: string;
  readonly digest: Digest;
  readonly isExecutable: boolean;
}

/** A symlink of an input root (a `declare_symlink` artifact, or one inside a tree artifact), never followed. */
export interface InputSymlink {
  readonly kind: 'symlink';
  readonly path: string;
  readonly target: string;
}

/** A directory of an input root that must exist even when empty (a tree artifact and its subdirectories). */
export interface InputDirectory {
  readonly kind: 'directory';
  readonly path: string;
}

/** One entry of an input root: a file (no `kind`), a symlink or a directory. */
export type InputEntry = InputFile | InputSymlink | InputDirectory;

/** The entries of `entries` that are files. */
export function inputFilesOf(entries: readonly InputEntry[]): InputFile[] {
  return entries.filter((e): e is InputFile => e.kind === undefined);
}

/** An input root as REAPI describes it: the root Directory's digest and every Directory message. */
export interface InputTree {
  readonly rootDigest: Digest;
  /** Serialized Directory messages, root included, keyed by `digestKey` (for upload to a CAS). */
  readonly directories: readonly EncodedMessage[];
}

interface DirNode {
  readonly files: Map<string, InputFile>;
  readonly symlinks: Map<string, string>;
  readonly dirs: Map<string, DirNode>;
}

const newNode = (): DirNode => ({ files: new Map(), symlinks: new Map(), dirs: new Map() });

/**
 * Builds the Merkle tree of Directory messages in REAPI's canonical form: files and directories
 * each sorted by name (code-point order of the UTF-8 names), no duplicates, no `.`/`..`, children
 * hashed before parents. The same set of files always gives the same root digest.
 * @throws Error when a path is both a file and a directory, or two entries disagree on a file.
 */
export function buildInputTree(entries: readonly InputEntry[]): InputTree {
  const root = newNode();
  for (const entry of entries) {
    const parts = entry.path.split('/');
    let dir = root;
    for (const part of parts.slice(0, -1)) {
      if (dir.files.has(part) || dir.symlinks.has(part)) throw new Error(`input '${entry.path}': '${part}' is both a file and a directory`);
      let child = dir.dirs.get(part);
      if (!child) {
        child = newNode();
        dir.dirs.set(part, child);
      }
      dir = child;
    }
    const name = parts[parts.length - 1]!;
    if (entry.kind !== undefined) {
      addSpecial(dir, name, entry);
      continue;
    }
    const file = entry;
    if (dir.dirs.has(name) || dir.symlinks.has(name)) throw new Error(`input '${file.path}' is both a file and a directory`);
    const existing = dir.files.get(name);
    if (existing && (existing.digest.hash !== file.digest.hash || existing.isExecutable !== file.isExecutable)) {
      throw new Error(`input '${file.path}' is listed twice with different contents`);
    }
    dir.files.set(name, file);
  }
  const directories: EncodedMessage[] = [];
  const rootDigest = encodeDir(root, directories);
  return { rootDigest, directories };
}

function addSpecial(dir: DirNode, name: string, entry: InputSymlink | InputDirectory): void {
  if (dir.files.has(name)) throw new Error(`input '${entry.path}' is both a file and a ${entry.kind}`);
  if (entry.kind === 'directory') {
    if (dir.symlinks.has(name)) throw new Error(`input '${entry.path}' is both a symlink and a directory`);
    if (!dir.dirs.has(name)) dir.dirs.set(name, newNode());
    return;
  }
  if (dir.dirs.has(name)) throw new Error(`input '${entry.path}' is both a symlink and a directory`);
  const existing = dir.symlinks.get(name);
  if (existing !== undefined && existing !== entry.target) throw new Error(`input '${entry.path}' is listed twice with different targets`);
  dir.symlinks.set(name, entry.target);
}

function encodeDir(dir: DirNode, out: EncodedMessage[]): Digest {
  const message: DirectoryFields = {
    files: sortedNames(dir.files).map((name) => {
      const f = dir.files.get(name)!;
      return { name, digest: f.digest, isExecutable: f.isExecutable };
    }),
    directories: sortedNames(dir.dirs).map((name) => ({ name, digest: encodeDir(dir.dirs.get(name)!, out) })),
    ...(dir.symlinks.size > 0 ? { symlinks: sortedNames(dir.symlinks).map((name) => ({ name, target: dir.symlinks.get(name)! })) } : {}),
  };
  const encoded = encodedBytes(encodeDirectory(message));
  out.push(encoded);
  return encoded.digest;
}

/**
 * REAPI sorts names by their UTF-8 bytes; for strings that is code-point order, not UTF-16 order.
 * The two differ only where a surrogate (half of a code point above U+FFFF) meets U+E000-U+FFFF, so
 * code units are compared directly (no encoding: this sorts every input of every action) and a
 * surrogate ranks above the whole Basic Multilingual Plane.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return x >= 0xd800 && y >= 0xd800 ? codePointRank(x) - codePointRank(y) : x - y;
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  return unit <= 0xdfff ? unit + 0x10000 : unit;
}

function sortedNames(map: Map<string, unknown>): string[] {
  return [...map.keys()].sort(compareUtf8);
}
