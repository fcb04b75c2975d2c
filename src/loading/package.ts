import type { Position } from '../core/index.js';
import type { AttrValue } from './rules/attribute.js';
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

interface EncodedPackage {
  r: string;
  p: string;
  b: string;
  t: unknown[];
  e: PackageError[];
  d: PackageDefaults;
}

/** Plain JSON for the persistent cache (attribute maps become pair lists). */
export function encodePackage(p: Package): EncodedPackage {
  return {
    r: p.repo,
    p: p.pkg,
    b: p.buildFile,
    t: [...p.targets.values()].map((t) => (t.kind === 'rule' ? { ...t, attrs: [...t.attrs] } : t)),
    e: [...p.errors],
    d: p.defaults,
  };
}

export function decodePackage(data: unknown): Package {
  const e = data as EncodedPackage;
  const targets = new Map<string, Target>();
  for (const raw of e.t as (Target & { attrs?: [string, AttrValue][] })[]) {
    const t = raw.kind === 'rule' ? { ...raw, attrs: new Map(raw.attrs as unknown as [string, AttrValue][]) } : raw;
    targets.set(t.name, t as Target);
  }
  return { repo: e.r, pkg: e.p, buildFile: e.b, targets, errors: e.e, defaults: e.d };
}
