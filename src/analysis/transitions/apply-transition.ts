import { formatPosition, KilnError, type Position } from '../../core/index.js';
import type { StarlarkTransition } from '../../loading/index.js';
import { EvalError, equals, None, StarDict, StarList, StarTuple, StarlarkError, Thread, typeName, type Value } from '../../starlark/index.js';
import type { BuildSettingLookup } from '../config/config-matching.js';
import type { BuildOptions, UserFlagSetting } from '../options/build-options.js';
import type { OptionValue } from '../../core/options/index.js';
import { canonicalFlagLabel } from '../options/parse-build-options.js';
import { userFlagValue } from '../options/user-defined-flag.js';
import { buildSettingFromStarlark, buildSettingStarlarkValue, sameBuildSettingValue } from './build-setting-values.js';
import { COMMAND_LINE_OPTION_PREFIX, nativeOptionFromStarlark, nativeOptionStarlarkValue, transitionableOption } from './native-option-values.js';
import { TransitionValidationError } from './transition-error.js';

/** The key of a 1:1 (patch) transition's only result, Bazel's PATCH_TRANSITION_KEY. */
export const PATCH_TRANSITION_KEY = '';

/** Bazel's internal option that analysis_test_transition sets (CoreOptions.evaluatingForAnalysisTest). */
export const EVALUATING_FOR_ANALYSIS_TEST = 'evaluating for analysis test';

export interface TransitionEnvironment {
  readonly buildSettings?: BuildSettingLookup;
  /** What `//command_line_option:cpu` reads when --cpu is unset. */
  readonly hostCpu: string;
  /** `print()` in a transition's implementation. */
  readonly debug?: (message: string, where: string) => void;
}

/**
 * Applies a Starlark transition to `from` as Bazel's FunctionTransitionUtil.applyAndValidate and
 * StarlarkTransition.validate do: the implementation gets the declared inputs and the rule's `attr`,
 * returns a dict of outputs (a patch), a dict of such dicts or a list of them (a split); each
 * result must set exactly the declared outputs; native options are converted by their own
 * converters, build settings by their type, and a build setting set to its default is dropped, so
 * unset and default are one configuration. Results equal to another are kept once (the first key).
 * Errors are KilnErrors at the transition's definition, in Bazel's words.
 */
export function applyTransition(
  transition: StarlarkTransition,
  from: BuildOptions,
  attr: Value,
  env: TransitionEnvironment,
): ReadonlyMap<string, BuildOptions> {
  const at = transition.location;
  try {
    if (transition.outputs.includes(`${COMMAND_LINE_OPTION_PREFIX}define`)) {
      throw new TransitionValidationError(
        'Starlark transition on --define not supported - try using build settings (https://docs.bazel.build/skylark/config.html#user-defined-build-settings).',
      );
    }
    const results =
      transition.kind === 'analysis_test_transition'
        ? new Map([[PATCH_TRANSITION_KEY, new Map(transition.settings)]])
        : evaluate(transition, settingsOf(transition, from, env), attr, env);
    if (results.size === 0) return new Map([[PATCH_TRANSITION_KEY, from]]);
    const out = new Map<string, BuildOptions>();
    const seen = new Set<string>();
    for (const [key, values] of results) {
      let to = applyValues(from, values, env);
      if (transition.kind === 'analysis_test_transition') to = to.with({ [EVALUATING_FOR_ANALYSIS_TEST]: true });
      if (seen.has(to.fingerprint())) continue;
      seen.add(to.fingerprint());
      out.set(key, to);
    }
    return out;
  } catch (e) {
    if (e instanceof TransitionValidationError) throw new KilnError(e.message, at);
    throw e;
  }
}

/** The `settings` dict: each declared input's value in `from`. */
function settingsOf(transition: StarlarkTransition, from: BuildOptions, env: TransitionEnvironment): StarDict {
  const dict = new StarDict();
  const unknown: string[] = [];
  for (const input of transition.inputs) {
    if (input.startsWith(COMMAND_LINE_OPTION_PREFIX)) {
      const name = input.slice(COMMAND_LINE_OPTION_PREFIX.length);
      if (!transitionableOption(from, name)) unknown.push(input);
      else dict.set(input, nativeOptionStarlarkValue(from, name, env.hostCpu));
      continue;
    }
    const label = canonicalFlagLabel(input);
    const def = label === undefined ? undefined : env.buildSettings?.(label);
    if (!def) unknown.push(input);
    else dict.set(input, buildSettingStarlarkValue(def, userFlagValue(def, from.userFlags.get(def.label))));
  }
  if (unknown.length > 0) throw new TransitionValidationError(`transition inputs [${unknown.join(', ')}] do not correspond to valid settings`);
  return dict;
}

/** Runs the implementation; its results by split key (an empty map: no change). */
function evaluate(transition: StarlarkTransition, settings: StarDict, attr: Value, env: TransitionEnvironment): Map<string, Map<string, Value>> {
  const impl = transition.implementation!;
  const implPos = (impl as { code?: { pos?: Position } }).code?.pos;
  const thread = new Thread(`transition ${impl.name}`, {
    print: (t, msg) => {
      const pos = t.callSyntax(0)?.pos;
      env.debug?.(msg, pos ? formatPosition(pos) : impl.name);
    },
  });
  let result: Value;
  try {
    result = thread.call(impl, [settings, attr]);
  } catch (e) {
    if (e instanceof EvalError) throw new KilnError(`${e.message}\n${e.backtrace()}`, e.pos, { cause: e });
    if (e instanceof StarlarkError) throw new KilnError(e.message, implPos);
    throw e;
  }
  const invalid = (message: string) => new KilnError(`invalid result from transition function: ${message}`, implPos);
  const outputsOf = (dict: StarDict): Map<string, Value> => {
    const entries = new Map<string, Value>();
    for (const k of dict.iterate()) {
      if (typeof k !== 'string') throw invalid(`got dict<${typeName(k)}, ...> for 'dictionary of options', want dict<string, ...>`);
      entries.set(k, dict.get(k)!);
    }
    const problem = outputProblem([...entries.keys()], transition.outputs);
    if (problem) throw invalid(problem);
    return entries;
  };
  if (result === None) return new Map();
  if (result instanceof StarDict) {
    if (result.len() === 0) return new Map();
    const values = [...result.iterate()].map((k) => result.get(k)!);
    if (values.every((v) => v instanceof StarDict)) {
      return new Map([...result.iterate()].map((k) => [String(k), outputsOf(result.get(k) as StarDict)]));
    }
    return new Map([[PATCH_TRANSITION_KEY, outputsOf(result)]]);
  }
  if (result instanceof StarList || result instanceof StarTuple) {
    const out = new Map<string, Map<string, Value>>();
    result.elems.forEach((e, i) => {
      if (!(e instanceof StarDict)) throw invalid(`at index ${i} of dictionary of options dictionaries, got element of type ${typeName(e)}, want dict`);
      out.set(String(i), outputsOf(e));
    });
    return out;
  }
  throw new KilnError(`transition function returned ${typeName(result)}, want dict or list of dicts`, implPos);
}

/** Bazel's validateFunctionOutputsMatchesDeclaredOutputs: exactly the declared outputs. */
function outputProblem(returned: readonly string[], declared: readonly string[]): string | undefined {
  const remaining = new Set(declared);
  for (const key of returned) if (!remaining.delete(key)) return `transition function returned undeclared output '${key}'`;
  if (remaining.size > 0) return `transition outputs [${[...remaining].join(',')}] were not defined by transition function`;
  return undefined;
}

/** `from` with one result's values: native options converted, build settings typed (a default one dropped). */
function applyValues(from: BuildOptions, values: ReadonlyMap<string, Value>, env: TransitionEnvironment): BuildOptions {
  const native: Record<string, OptionValue> = {};
  const flags = new Map<string, UserFlagSetting>(from.userFlags);
  let flagsChanged = false;
  for (const [key, value] of values) {
    if (key.startsWith(COMMAND_LINE_OPTION_PREFIX)) {
      const name = key.slice(COMMAND_LINE_OPTION_PREFIX.length);
      const def = transitionableOption(from, name);
      if (!def) throw new TransitionValidationError(`transition output '${key}' does not correspond to a valid setting`);
      // Written back as read (the host cpu for an unset --cpu, the same Labels): no change.
      if (equals(value, nativeOptionStarlarkValue(from, name, env.hostCpu))) continue;
      native[name] = nativeOptionFromStarlark(def, value);
      continue;
    }
    const label = canonicalFlagLabel(key);
    const def = label === undefined ? undefined : env.buildSettings?.(label);
    if (!def) throw new TransitionValidationError(`attempting to transition on '${key}' which is not a build setting`);
    const typed = buildSettingFromStarlark(def, value, key);
    if (sameBuildSettingValue(typed, userFlagValue(def, from.userFlags.get(def.label)))) continue;
    flagsChanged = true;
    if (sameBuildSettingValue(typed, def.defaultValue)) flags.delete(def.label);
    else flags.set(def.label, { label: def.label, value: undefined, negated: false, transitioned: [typed] });
  }
  // Bazel's handleImplicitPlatformChange: a new --cpu without --platforms clears --platforms.
  if ('cpu' in native && !values.has(`${COMMAND_LINE_OPTION_PREFIX}platforms`)) native.platforms = [];
  let to = Object.keys(native).length > 0 ? from.with(native) : from;
  if (flagsChanged) to = to.withUserFlags(flags);
  return to;
}
