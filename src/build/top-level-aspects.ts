import {
  AspectResolutionError,
  resolveCommandLineAspect,
  type Analyzer,
  type AspectValue,
  type ConfiguredTarget,
  type LoadedTargetGraph,
} from '../analysis/index.js';
import { isKilnError, type Position } from '../core/index.js';
import type { StarlarkAspect } from '../loading/index.js';
import type { BuiltAspect } from './build-graph.js';

/**
 * The output groups `--output_groups` asks for: `default` (DefaultInfo files) unless named groups
 * replace it; `+group` adds a group to the default one, `-group` takes one away.
 */
export function requestedOutputGroups(outputGroups: readonly string[]): Set<string> {
  const relative = outputGroups.length > 0 && outputGroups.every((g) => g.startsWith('+') || g.startsWith('-'));
  const groups = new Set(relative || outputGroups.length === 0 ? ['default'] : []);
  for (const g of outputGroups) {
    if (g.startsWith('-')) groups.delete(g.slice(1));
    else groups.add(g.startsWith('+') ? g.slice(1) : g);
  }
  return groups;
}

/** The files of an aspect's output groups that `--output_groups` asks for (an aspect has no default files). */
function aspectFiles(value: AspectValue | undefined, groups: ReadonlySet<string>): string[] {
  const out = new Set<string>();
  for (const g of groups) for (const f of value?.outputGroups.get(g) ?? []) out.add(f.artifact.execPath);
  return [...out];
}

/**
 * `--aspects=//pkg:x.bzl%name,...`: each aspect applied to every top-level target (in the target
 * configuration), later ones seeing the earlier ones they require. Errors are printed in Bazel's
 * words (`Analysis of aspect '<aspect> of <target>' failed; build aborted: ...`); `failed` says
 * one was.
 */
export function analyzeTopLevelAspects(
  analyzer: Analyzer,
  graph: LoadedTargetGraph,
  values: readonly string[],
  targets: readonly ConfiguredTarget[],
  outputGroups: readonly string[],
  printError: (message: string, pos?: Position) => void,
): { readonly aspects: readonly BuiltAspect[]; readonly failed: boolean } {
  if (targets.length === 0) return { aspects: [], failed: false };
  let resolved: StarlarkAspect[];
  try {
    resolved = values.map((v) => resolveCommandLineAspect(v, graph));
  } catch (e) {
    if (!(e instanceof AspectResolutionError)) throw e;
    printError(e.message, e.pos);
    if (e.aspect !== undefined) printError(`Analysis of aspect '${e.aspect} of ${targets[0]!.label}' failed; build aborted: ${e.message}`);
    return { aspects: [], failed: true };
  }
  const groups = requestedOutputGroups(outputGroups);
  const aspects: BuiltAspect[] = [];
  let failed = false;
  for (const ct of targets) {
    try {
      for (const { descriptor, value } of analyzer.aspects.applyTopLevel(resolved, ct)) {
        aspects.push({ aspect: descriptor.key, target: ct.label, files: aspectFiles(value, groups) });
      }
    } catch (e) {
      if (!isKilnError(e)) throw e;
      printError(e.message, e.pos);
      printError(`Analysis of aspect '${resolved[0]!.key} of ${ct.label}' failed; build aborted: Analysis of target '${ct.label}' failed`);
      failed = true;
    }
  }
  return { aspects, failed };
}
