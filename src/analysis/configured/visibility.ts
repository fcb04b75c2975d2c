import type { TargetGraph } from './configured-target.js';
import { packageKeyOf, splitLabel } from './target-paths.js';

/**
 * Whether a target with this visibility may be used from a target of another package:
 * `//visibility:public`, `//visibility:private` (same package only), `//p:__pkg__`,
 * `//p:__subpackages__`, and labels of package_group targets (their `packages` specs and
 * `includes`). A target is always visible inside its own package.
 */
export function isVisible(depLabel: string, visibility: readonly string[], fromLabel: string, graph: TargetGraph): boolean {
  const fromPackage = packageKeyOf(fromLabel);
  if (packageKeyOf(depLabel) === fromPackage) return true;
  return visibility.some((v) => grants(v, fromPackage, graph, new Set()));
}

function grants(entry: string, fromPackage: string, graph: TargetGraph, visiting: Set<string>): boolean {
  const { pkg: entryPackage, name } = splitLabel(entry);
  // `//visibility:public` written in another repository reads `@repo//visibility:public`; it is the same keyword.
  if (entryPackage === 'visibility' && name === 'public') return true;
  if (entryPackage === 'visibility' && name === 'private') return false;
  const pkg = packageKeyOf(entry);
  if (name === '__pkg__') return fromPackage === pkg;
  if (name === '__subpackages__') return underPackage(fromPackage, pkg);
  const group = graph.target(entry);
  if (!group || group.kind !== 'package_group' || visiting.has(entry)) return false;
  visiting.add(entry);
  // Later specs do not override earlier ones; an exclusion (`-//p`) wins over any inclusion.
  let included = false;
  for (const spec of group.packages) {
    const negative = spec.startsWith('-');
    if (specMatches(negative ? spec.slice(1) : spec, fromPackage)) {
      if (negative) return false;
      included = true;
    }
  }
  return included || group.includes.some((g) => grants(g, fromPackage, graph, visiting));
}

/** A package_group spec: `//p`, `//p/...`, `//...`, `public`, `private`. */
function specMatches(spec: string, fromPackage: string): boolean {
  if (spec === 'public' || spec === '//...') return true;
  if (spec === 'private') return false;
  if (spec.endsWith('/...')) return underPackage(fromPackage, spec.slice(0, -4));
  return fromPackage === spec;
}

function underPackage(pkg: string, root: string): boolean {
  if (pkg === root) return true;
  return root.endsWith('//') ? pkg.startsWith(root) : pkg.startsWith(`${root}/`);
}
