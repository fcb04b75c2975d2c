import type { RunEnvironment } from '../configured/configured-target.js';
import type { RuleContext } from '../configured/rule-context.js';
import { configurationMakeVariables } from '../expansion/configuration-make-variables.js';
import { ExpansionFailure, type LocationEntry } from '../expansion/location-expander.js';
import { expandRunArguments, expandRunValue } from '../expansion/run-arguments.js';

/** The attributes whose files `$(location)` in `args` and `env` may name, as Bazel's LocationExpander. */
const LOCATION_ATTRIBUTES = ['srcs', 'deps', 'data'];

/**
 * An executable or test rule's `args` and `env` as `kiln test` and `kiln run` pass them (Bazel's
 * RunfilesSupport): `$(location)` & co. of the files of `srcs`, `deps` and `data` (those of them the
 * rule has as label lists) and Make variables expanded, `args` then split into words. A malformed
 * value is an error of the rule naming the attribute.
 */
export function runEnvironmentOf(ctx: RuleContext, hasLabelList: (attribute: string) => boolean): RunEnvironment {
  const prerequisites = new Map<string, LocationEntry>();
  const attributes = LOCATION_ATTRIBUTES.filter(hasLabelList);
  for (const dep of attributes.flatMap((a) => ctx.deps(a))) {
    prerequisites.set(dep.label, { execPaths: dep.files.map((f) => f.artifact.execPath), rootPaths: dep.files.map((f) => f.rootPath) });
  }
  const locations = { prerequisites, canonicalize: (raw: string) => ctx.canonicalize(raw) };
  const variables = configurationMakeVariables(ctx.config);
  const lookup = (name: string) => variables.get(name);
  const expand = <T>(attribute: string, f: () => T): T => {
    try {
      return f();
    } catch (e) {
      if (e instanceof ExpansionFailure) throw ctx.error(attribute, e.message);
      throw e;
    }
  };
  const args = expand('args', () => expandRunArguments(ctx.attr<readonly string[]>('args', []), locations, lookup));
  const env = expand('env', () =>
    ctx.attr<readonly (readonly [string, string])[]>('env', []).map(([k, v]) => [k, expandRunValue(v, locations, lookup)] as const),
  );
  return { args, env };
}
