import { Depset, depsetOf } from '../../loading/index.js';
import { Builtin, StarList, StarObject, StarStruct, StarTuple, StarlarkError, typeName, unpackArgs, type Value } from '../../starlark/index.js';

/**
 * Bazel's `runfiles`: the files (and symlinks) a program needs at run time. Held as depsets, so
 * merging runfiles along a dependency chain never copies them.
 */
export class RunfilesValue extends StarObject {
  constructor(
    readonly files: Depset,
    /** Depsets of `SymlinkEntry` structs (path, target_file). */
    readonly symlinks: Depset = Depset.EMPTY,
    readonly rootSymlinks: Depset = Depset.EMPTY,
  ) {
    super();
  }

  static readonly EMPTY = new RunfilesValue(Depset.EMPTY);

  get type(): string {
    return 'runfiles';
  }

  merge(others: readonly RunfilesValue[]): RunfilesValue {
    const all = [this, ...others];
    return new RunfilesValue(
      depsetOf(
        [],
        all.map((r) => r.files),
      ),
      depsetOf(
        [],
        all.map((r) => r.symlinks),
      ),
      depsetOf(
        [],
        all.map((r) => r.rootSymlinks),
      ),
    );
  }

  override attr(name: string): Value | undefined {
    switch (name) {
      case 'files':
        return this.files;
      case 'symlinks':
        return this.symlinks;
      case 'root_symlinks':
        return this.rootSymlinks;
      case 'empty_filenames':
        return Depset.EMPTY;
      case 'merge':
        return new Builtin('merge', (_t, args, kwargs) => {
          const [other] = unpackArgs('merge', args, kwargs, ['other']);
          if (!(other instanceof RunfilesValue)) throw new StarlarkError(`merge: for parameter other: got ${typeName(other!)}, want runfiles`);
          return this.merge([other]);
        });
      case 'merge_all':
        return new Builtin('merge_all', (_t, args, kwargs) => {
          const [others] = unpackArgs('merge_all', args, kwargs, ['other']);
          if (!(others instanceof StarList || others instanceof StarTuple))
            throw new StarlarkError(`merge_all: for parameter other: got ${typeName(others!)}, want sequence of runfiles`);
          return this.merge(
            others.elems.map((o, i) => {
              if (!(o instanceof RunfilesValue)) throw new StarlarkError(`merge_all: at index ${i}, got ${typeName(o)}, want runfiles`);
              return o;
            }),
          );
        });
      default:
        return undefined;
    }
  }

  override attrNames(): string[] {
    return ['empty_filenames', 'files', 'merge', 'merge_all', 'root_symlinks', 'symlinks'];
  }

  repr(): string {
    return '<runfiles>';
  }
}

/** A `symlinks = {path: File}` entry, as Bazel's SymlinkEntry. */
export function symlinkEntry(path: string, target: Value): StarStruct {
  return new StarStruct([
    ['path', path],
    ['target_file', target],
  ]);
}
