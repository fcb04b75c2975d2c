import { Label, StarLabel } from '../../loading/index.js';
import { hashValue, StarObject, StarStruct, type Value } from '../../starlark/index.js';
import type { Artifact } from '../../actions/index.js';
import type { FileEntry } from '../configured/configured-target.js';

/**
 * Bazel's `File`: a source or derived artifact seen from Starlark. Two File values are equal when
 * they name the same exec path, so depsets de-duplicate them however they were made.
 */
export class FileValue extends StarObject {
  constructor(
    readonly entry: FileEntry,
    /** Label of the source file, or of the target whose action makes the file. */
    readonly owner: string,
    /** For a file inside a tree artifact (an expanded directory), its path relative to the tree. */
    readonly treeRelativePath = '',
  ) {
    super();
  }

  get artifact(): Artifact {
    return this.entry.artifact;
  }
  get path(): string {
    return this.entry.artifact.execPath;
  }
  get type(): string {
    return 'File';
  }
  /** A tree artifact (`declare_directory`): a directory whose files exist once its action ran. */
  get isDirectory(): boolean {
    return this.artifact.kind === 'derived' && this.artifact.type === 'directory';
  }
  /** An unresolved symlink (`declare_symlink`). */
  get isSymlink(): boolean {
    return this.artifact.kind === 'derived' && this.artifact.type === 'symlink';
  }

  /** The Files inside this tree artifact at these exec paths (Bazel's TreeFileArtifacts), owned like it. */
  children(execPaths: readonly string[]): FileValue[] {
    const artifact = this.artifact;
    if (artifact.kind !== 'derived') return [];
    return execPaths.map((execPath) => {
      const relative = execPath.slice(this.path.length + 1);
      const child: FileEntry = {
        artifact: { kind: 'derived', execPath, root: artifact.root, owner: artifact.owner },
        rootPath: `${this.entry.rootPath}/${relative}`,
      };
      return new FileValue(child, this.owner, relative);
    });
  }
  override hash(): number {
    return hashValue(this.path);
  }
  override equals(other: StarObject): boolean {
    return other instanceof FileValue && other.path === this.path;
  }
  override compare(other: StarObject): number {
    const o = (other as FileValue).path;
    return this.path < o ? -1 : this.path > o ? 1 : 0;
  }

  override attr(name: string): Value | undefined {
    const path = this.path;
    switch (name) {
      case 'path':
        return path;
      case 'short_path':
        return this.entry.rootPath;
      case 'basename':
        return path.slice(path.lastIndexOf('/') + 1);
      case 'dirname':
        return path.lastIndexOf('/') < 0 ? '' : path.slice(0, path.lastIndexOf('/'));
      case 'extension': {
        const basename = path.slice(path.lastIndexOf('/') + 1);
        const dot = basename.lastIndexOf('.');
        return dot < 0 ? '' : basename.slice(dot + 1);
      }
      case 'root':
        return new StarStruct([['path', this.artifact.kind === 'derived' ? this.artifact.root : '']]);
      case 'is_source':
        return this.artifact.kind === 'source';
      case 'is_directory':
        return this.isDirectory;
      case 'is_symlink':
        return this.isSymlink;
      case 'owner':
        return new StarLabel(Label.parse(this.owner));
      case 'tree_relative_path':
        return this.treeRelativePath;
      default:
        return undefined;
    }
  }
  override attrNames(): string[] {
    return ['basename', 'dirname', 'extension', 'is_directory', 'is_source', 'is_symlink', 'owner', 'path', 'root', 'short_path', 'tree_relative_path'];
  }
  repr(): string {
    if (this.artifact.kind === 'source') return `<source file ${this.entry.rootPath}>`;
    return `<generated file ${this.entry.rootPath}>`;
  }
}

/** The File of an entry: its owner is the entry's label, else the deriving target, else its own path. */
export function fileValueOf(entry: FileEntry): FileValue {
  const owner = entry.label ?? (entry.artifact.kind === 'derived' ? entry.artifact.owner : `//:${entry.artifact.execPath}`);
  return new FileValue(entry, owner);
}
