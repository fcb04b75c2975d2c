import { Label } from '../loading/index.js';

/** A package_group's specs as visibility reads them. */
export interface PackageGroupSpecs {
  readonly packages: readonly string[];
  readonly includes: readonly string[];
}

/** Finds a package_group by its canonical label (undefined when it is none). */
export type PackageGroupLookup = (label: string) => PackageGroupSpecs | undefined;

/**
 * Whether a target with this visibility may be used from package `fromPackage` (`//p`, `@r//p`):
 * `//visibility:public`, `//visibility:private`, `//p:__pkg__`, `//p:__subpackages__` and
 * package_group labels (their `packages` specs, `-` exclusions winning, and `includes`). Query's
 * visible() and analysis's visibility check both decide with this.
 */
export function visibilityGrants(visibility: readonly string[], fromPackage: string, groups: PackageGroupLookup): boolean {
  return visibility.some((entry) => grants(entry, fromPackage, groups, new Set()));
}

function grants(entry: string, fromPackage: string, groups: PackageGroupLookup, visiting: Set<string>): boolean {
  const label = Label.parse(entry);
  const pkg = label.packageKey;
  if (label.pkg === 'visibility') return label.name === 'public';
  if (label.name === '__pkg__') return fromPackage === pkg;
  if (label.name === '__subpackages__') return within(fromPackage, pkg);
  const group = groups(entry);
  if (!group || visiting.has(entry)) return false;
  visiting.add(entry);
  let included = false;
  for (const spec of group.packages) {
    const negative = spec.startsWith('-');
    if (specMatches(negative ? spec.slice(1) : spec, fromPackage)) {
      if (negative) return false;
      included = true;
    }
  }
  return included || group.includes.some((g) => grants(g, fromPackage, groups, visiting));
}

function specMatches(spec: string, fromPackage: string): boolean {
  if (spec === 'public' || spec === '//...') return true;
  if (spec === 'private') return false;
  return spec.endsWith('/...') ? within(fromPackage, spec.slice(0, -4)) : fromPackage === spec;
}

function within(pkg: string, root: string): boolean {
  return pkg === root || (root.endsWith('//') ? pkg.startsWith(root) : pkg.startsWith(`${root}/`));
}
