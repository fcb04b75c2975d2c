import type { Position } from '../core/index.js';
import type { PackageDefaults } from './package-builder.js';
import type { Target } from './target.js';

/** One error of a package, already positioned. */
export interface PackageError {
  readonly message: string;
  readonly pos?: Position;
}

/** A loaded package: its targets (declaration order) and the errors its BUILD file produced. */
export interface Package {
  readonly repo: string;
  readonly pkg: string;
  /** Display path of the BUILD file (workspace-relative, or external/<repo>/...). */
  readonly buildFile: string;
  readonly targets: ReadonlyMap<string, Target>;
  readonly errors: readonly PackageError[];
  readonly defaults: PackageDefaults;
}

/** `//pkg` or `@repo//pkg`. */
export function packageId(repo: string, pkg: string): string {
  return `${repo === '' ? '' : `@${repo}`}//${pkg}`;
}
