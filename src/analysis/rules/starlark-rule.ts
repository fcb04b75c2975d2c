import { formatPosition, KilnError, type Position } from '../../core/index.js';
import type { Action } from '../../actions/index.js';
import {
  DEFAULT_INFO,
  type Depset,
  depsetOf,
  EXECUTION_INFO,
  RUN_ENVIRONMENT_INFO,
  OUTPUT_GROUP_INFO,
  ProviderInstance,
  type RuleClass,
  type StarlarkRuleFunction,
  TEMPLATE_VARIABLE_INFO,
} from '../../loading/index.js';
import { EvalError, None, StarDict, StarList, StarStruct, StarTuple, StarlarkError, Thread, typeName, type Value } from '../../starlark/index.js';
import type { FileEntry, RunEnvironment } from '../configured/configured-target.js';
import type { RuleContext } from '../configured/rule-context.js';
import { ActionRegistry } from '../starlark/actions-value.js';
import { CtxValue } from '../starlark/ctx-value.js';
import { FileValue } from '../starlark/file-value.js';
import { RunfilesValue } from '../starlark/runfiles-value.js';
import type { WorkspaceStatus } from '../starlark/workspace-status.js';
import { analysisTestScript } from './analysis-test-result.js';
import { uniqueFiles, type RuleResult } from './rule-result.js';
import { returnedValues } from './returned-values.js';
import { runEnvironmentOf } from './run-environment.js';

interface StarlarkRuleAnalysis {
  readonly rule: StarlarkRuleFunction;
  readonly workspaceName: string;
  /** `ctx.build_setting_value`, for rules with `build_setting`. */
  readonly buildSettingValue?: Value;
  /** `print()` from the implementation, with where it was called (`file:line:col`). */
  readonly debug?: (message: string, where: string) => void;
  /** The build's workspace status files (`ctx.info_file`, `ctx.version_file`). */
  readonly workspaceStatus?: () => WorkspaceStatus;
}

function entriesOf(files: Depset | undefined): FileEntry[] {
  return (files?.toList() ?? []).filter((f): f is FileValue => f instanceof FileValue).map((f) => f.entry);
}

function runfilesEntries(r: Value | undefined): FileEntry[] {
  return r instanceof RunfilesValue ? entriesOf(r.files) : [];
}

/**
 * Runs a Starlark rule's implementation function with `ctx` and turns what it returns into the
 * configured target's providers: DefaultInfo (files to build, runfiles, executable),
 * OutputGroupInfo and the rule's own providers. Errors are Bazel's, at the implementation's
 * position with the Starlark backtrace.
 */
export function analyzeStarlarkRule(rc: RuleContext, analysis: StarlarkRuleAnalysis): RuleResult {
  const rule = analysis.rule;
  const ruleClass: RuleClass = rule.ruleClass!;
  const dirs = rc.config.outputDirectories;
  const registry = new ActionRegistry({
    label: rc.target.label,
    ruleClass: ruleClass.name,
    location: rc.target.location,
    root: rule.options.outputToGenfiles ? dirs.genfiles : dirs.bin,
    execProperties: (group) => (group === undefined || rc.execGroupNames.includes(group) ? rc.execProperties(group) : undefined),
    ...(ruleClass.starlark?.analysisTest ? { analysisTest: true } : {}),
  });
  const ctx = new CtxValue(rc, {
    rule,
    ruleClass,
    registry,
    workspaceName: analysis.workspaceName,
    ...(analysis.workspaceStatus ? { workspaceStatus: analysis.workspaceStatus } : {}),
    ...(analysis.buildSettingValue !== undefined ? { buildSettingValue: analysis.buildSettingValue } : {}),
  });
  const thread = new Thread(`analysis of ${rc.target.label}`, {
    print: (t, msg) => {
      const at = t.callSyntax(0)?.pos; // the print call itself: where it starts, as Bazel 2.1 positions it
      analysis.debug?.(msg, at ? formatPosition(at) : (implementationPosition(rule)?.file ?? rule.name));
    },
  });
  let returned: Value;
  try {
    returned = thread.call(rule.implementation, [ctx]);
  } catch (e) {
    if (e instanceof EvalError) {
      throw new KilnError(`in ${ruleClass.name} rule ${rc.target.label}: ${e.message}\n${e.backtrace()}`, e.pos, { cause: e });
    }
    if (e instanceof StarlarkError) throw rc.error(undefined, e.message);
    throw e;
  }
  const providers = providersOf(returned, rc, rule);
  // An analysis test registers no action itself: Kiln writes the test script its AnalysisTestResultInfo stands for.
  const testScript = ruleClass.starlark?.analysisTest ? analysisTestScript(rc, new Map(providers.map((p) => [p.provider.key, p]))) : undefined;
  const result = interpret(providers, ctx, rc, ruleClass, rule, testScript && new FileValue(testScript.file, rc.target.label));
  const problem = registry.check(rc.config.id);
  if (problem !== undefined) {
    if (problem.startsWith('file ')) throw new KilnError(problem);
    throw rc.error(undefined, problem);
  }
  // Bazel leaves every output executable (0555); Kiln sets the bit where it matters: the rule's program.
  const program = result.executable?.artifact.execPath;
  const actions = registry.actions.map((a) =>
    program !== undefined && !a.executableOutputs && a.outputs.some((o) => o.execPath === program) ? markedExecutable(a) : a,
  );
  if (testScript) actions.push(testScript.action);
  return { ...result, actions };
}

/** The providers returned: a list of provider instances, a legacy struct with `providers`, or None. */
function providersOf(returned: Value, rc: RuleContext, rule: StarlarkRuleFunction): ProviderInstance[] {
  const list = returnedValues(returned);
  if (!list) throw rc.error(undefined, `Rule should return a struct or a list, but got ${typeName(returned)}`);
  const out: ProviderInstance[] = [];
  const seen = new Set<string>();
  const impl = implementationPosition(rule);
  const pos = impl ? formatPosition(impl) : rule.name;
  for (const v of list) {
    if (!(v instanceof ProviderInstance)) {
      throw rc.error(undefined, `\n\n\n${pos}: A return value of a rule implementation function should be a sequence of declared providers`);
    }
    if (seen.has(v.provider.key)) throw rc.error(undefined, `Multiple conflicting returned providers with key ${v.provider.name}`);
    seen.add(v.provider.key);
    out.push(v);
  }
  for (const name of rule.ruleClass!.starlark?.provides ?? []) {
    if (!out.some((p) => p.provider.name === name)) {
      throw rc.error(
        undefined,
        `The rule '${rule.name}' promises to provide '${name}' in its 'provides' attribute, but the implementation function does not return it.`,
      );
    }
  }
  return out;
}

/** Where the implementation function's `def` is (Bazel names it in some errors). */
function implementationPosition(rule: StarlarkRuleFunction): Position | undefined {
  return (rule.implementation as { code?: { pos?: Position } }).code?.pos;
}

function interpret(
  providers: readonly ProviderInstance[],
  ctx: CtxValue,
  rc: RuleContext,
  ruleClass: RuleClass,
  rule: StarlarkRuleFunction,
  testScript?: FileValue,
): Omit<RuleResult, 'actions'> {
  const byKey = new Map(providers.map((p) => [p.provider.key, p]));
  const info = byKey.get(DEFAULT_INFO.key);
  const given = (name: string) => {
    const v = info?.field(name);
    return v === undefined || v === None ? undefined : v;
  };
  let executable = testScript ?? (given('executable') as FileValue | undefined);
  executable ??= ctx.executableOutput();
  if (ruleClass.executable && !executable) {
    throw rc.error(
      undefined,
      `The rule '${rule.name}' is executable. It needs to create an executable File and pass it as the 'executable' parameter to the DefaultInfo it returns.`,
    );
  }
  const predeclared = ctx.predeclaredOutputs();
  const filesDepset = (given('files') as Depset | undefined) ?? depsetOf([...predeclared, ...(executable ? [executable] : [])]);
  const files = uniqueFiles(entriesOf(filesDepset));
  const defaultRunfiles = (given('runfiles') ?? given('default_runfiles')) as RunfilesValue | undefined;
  const dataRunfiles = (given('data_runfiles') ?? defaultRunfiles) as RunfilesValue | undefined;
  const runfiles = uniqueFiles([...(executable ? [executable.entry] : []), ...runfilesEntries(defaultRunfiles)]);
  const outputGroups = new Map<string, FileEntry[]>();
  const groups = byKey.get(OUTPUT_GROUP_INFO.key);
  if (groups) for (const name of groups.names) outputGroups.set(name, uniqueFiles(entriesOf(groups.field(name) as Depset)));
  // DefaultInfo as dependents see it: files always set, runfiles and files_to_run filled in.
  const normalized = new ProviderInstance(DEFAULT_INFO, [
    ['files', filesDepset],
    ['default_runfiles', defaultRunfiles ?? RunfilesValue.EMPTY],
    ['data_runfiles', dataRunfiles ?? RunfilesValue.EMPTY],
    ['files_to_run', new StarStruct([['executable', executable ?? None]])],
    ...(executable ? ([['executable', executable]] as [string, Value][]) : []),
  ]);
  byKey.set(DEFAULT_INFO.key, normalized);
  // TemplateVariableInfo: Make variables for rules that list this target in `toolchains` (genrule).
  const vars = byKey.get(TEMPLATE_VARIABLE_INFO.key)?.field('variables');
  const templateVariables = vars instanceof StarDict ? new Map([...vars.iterate()].map((k) => [k as string, vars.get(k) as string])) : undefined;
  return {
    ...(templateVariables ? { templateVariables } : {}),
    files,
    runfiles,
    outputGroups,
    providers: byKey,
    ...(executable ? { executable: executable.entry } : {}),
    ...(executable && (ruleClass.executable || ruleClass.isTest)
      ? {
          runEnvironment: withReturnedEnvironment(
            runEnvironmentOf(rc, (a) => ruleClass.attributes.get(a)?.type === 'label_list'),
            byKey,
          ),
        }
      : {}),
  };
}

/**
 * The run environment with what the rule returned: RunEnvironmentInfo's `environment` (over the
 * `env` attribute) and `inherited_environment`, and a test's testing.ExecutionInfo requirements.
 */
function withReturnedEnvironment(run: RunEnvironment, providers: ReadonlyMap<string, ProviderInstance>): RunEnvironment {
  const info = providers.get(RUN_ENVIRONMENT_INFO.key);
  const execution = providers.get(EXECUTION_INFO.key)?.field('requirements');
  const environment = info?.field('environment');
  const inherited = info?.field('inherited_environment');
  const env = new Map(run.env);
  if (environment instanceof StarDict) for (const k of environment.iterate()) env.set(k as string, environment.get(k) as string);
  const names = inherited instanceof StarList || inherited instanceof StarTuple ? (inherited.elems as string[]) : [];
  return {
    args: run.args,
    env: [...env],
    ...(names.length > 0 ? { inherited: names } : {}),
    ...(execution instanceof StarDict ? { executionRequirements: [...execution.iterate()] as string[] } : {}),
  };
}

/** The action with executable outputs; its lazily expanded argv stays lazy (a spread would expand it). */
function markedExecutable(action: Action): Action {
  return Object.defineProperties({}, { ...Object.getOwnPropertyDescriptors(action), executableOutputs: { value: true, enumerable: true } }) as Action;
}
