import type { Value } from '../starlark/index.js';
import { StarlarkRuleFunction } from './bzl-builtins.js';
import { Provider } from './provider.js';
import { RepositoryRule } from './repository-rule.js';
import { StarlarkAspect } from './starlark-aspect.js';
import { SymbolicMacro } from './symbolic-macro.js';

/**
 * Names Bazel assigns on export: rules, providers, aspects, macros and repository rules learn the
 * global name they are first bound to in the .bzl file that made them.
 */
export function exportGlobals(globals: ReadonlyMap<string, Value>, bzlLabel: string): void {
  // Providers first: a rule's `provides` names them.
  for (const [name, v] of globals) if (v instanceof Provider) v.export(name, bzlLabel);
  for (const [name, v] of globals) {
    if (v instanceof StarlarkRuleFunction) v.export(name, bzlLabel);
    else if (v instanceof StarlarkAspect || v instanceof RepositoryRule || v instanceof SymbolicMacro) v.exported.set(name, bzlLabel);
  }
}
