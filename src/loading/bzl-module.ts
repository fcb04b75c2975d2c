import type { File, Value } from '../starlark/index.js';

/** An evaluated .bzl or .scl file: what documentation extraction reads. */
export interface BzlModule {
  /** Canonical label of the file, e.g. `//pkg:defs.bzl`. */
  readonly label: string;
  /** The path its positions name (workspace-relative; `external/<repo>/...` for other repositories). */
  readonly displayPath: string;
  readonly source: string;
  readonly file: File;
  /** Every global, private ones included, in the order the resolver bound them. */
  readonly globals: ReadonlyMap<string, Value>;
}
