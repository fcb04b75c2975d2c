import { visibilityGrants } from '../../query/index.js';
import type { TargetGraph } from './configured-target.js';
import { packageKeyOf } from './target-paths.js';

/**
 * Whether a target with this visibility may be used from a target of another package:
 * `//visibility:public`, `//visibility:private` (same package only), `//p:__pkg__`,
 * `//p:__subpackages__`, and labels of package_group targets (their `packages` specs and
 * `includes`). A target is always visible inside its own package.
 */
export function isVisible(depLabel: string, visibility: readonly string[], fromLabel: string, graph: TargetGraph): boolean {
  const fromPackage = packageKeyOf(fromLabel);
  if (packageKeyOf(depLabel) === fromPackage) return true;
  return visibilityGrants(visibility, fromPackage, (label) => {
    const group = graph.target(label);
    return group?.kind === 'package_group' ? group : undefined;
  });
}
