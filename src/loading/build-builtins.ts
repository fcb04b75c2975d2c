import type { Position } from '../core/index.js';
import {
  Builtin,
  None,
  StarDict,
  StarList,
  StarModule,
  StarTuple,
  StarlarkError,
  typeName,
  unpackArgs,
  type Kwargs,
  type Thread,
  type Value,
} from '../starlark/index.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { glob, GlobError, globPatternMatches } from './glob.js';
import { Label } from './label.js';
import type { PackageBuilder } from './package-builder.js';
import type { AttrValue, PlainAttrValue } from './rules/attribute.js';
import type { RuleClass } from './rules/rule-class.js';
import { makeSelect, SelectorList } from './select.js';
import type { GeneratorInfo, Target } from './target.js';
import { StarLabel } from './starlark-label.js';
import { runningStatement } from './top-level-statement.js';
import { unsupportedEntries } from './unsupported.js';
import { readWorkspaceName } from './workspace.js';

/** Thread-local keys the BUILD-file environment uses. */
export const BUILDER_KEY = 'kiln.package';

/** The package being built by the BUILD thread that is calling, or an error as Bazel words it. */
function builderOf(thread: Thread, fn: string): PackageBuilder {
  const b = thread.locals.get(BUILDER_KEY) as PackageBuilder | undefined;
  if (!b) {
    throw new StarlarkError(`${fn}() can only be used while evaluating a BUILD file (or macro); wrap it in a function and call it from a BUILD file`);
  }
  return b;
}

/** Where the current top-level BUILD statement (the outermost call) is. */
function callPosition(thread: Thread, b: PackageBuilder): Position {
  return runningStatement(thread)?.pos ?? { file: b.buildFilePath, line: 1, col: 1 };
}

/** Bazel's generator_* values when a macro (not the rule function itself) is the outermost call. */
function generatorOf(thread: Thread, ruleName: string): GeneratorInfo | undefined {
  const info = runningStatement(thread);
  if (!info?.callee || info.callee === ruleName || info.nameArgument === undefined) return undefined;
  return { name: info.nameArgument, function: info.callee, location: `${info.pos.file}:${info.pos.line}` };
}

function strings(fn: string, param: string, v: Value | undefined): string[] {
  if (v === undefined || v === None) return [];
  if (!(v instanceof StarList || v instanceof StarTuple))
    throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeof v === 'object' ? v.type : typeof v}, want sequence`);
  return v.elems.map((e, i) => {
    if (typeof e !== 'string')
      throw new StarlarkError(`${fn}: for parameter ${param}: at index ${i}, got ${typeof e === 'object' ? e.type : typeof e}, want string`);
    return e;
  });
}

/** A native rule function (`genrule(...)`, `native.genrule(...)`). */
function ruleFunction(rc: RuleClass): Builtin {
  return new Builtin(rc.name, (thread, args, kwargs) => {
    const b = builderOf(thread, rc.name);
    if (args.length > 0) throw new StarlarkError(`${rc.name}: unexpected positional arguments`);
    b.addRule(rc, kwargs, callPosition(thread, b), generatorOf(thread, rc.name));
    return None;
  });
}

/** Declares a target of a Starlark-defined rule from whatever thread calls it. */
export function declareStarlarkRule(thread: Thread, rc: RuleClass, kwargs: Kwargs | null): void {
  const b = builderOf(thread, rc.name);
  b.addRule(rc, kwargs, callPosition(thread, b), generatorOf(thread, rc.name));
}

const globBuiltin = new Builtin('glob', (thread, args, kwargs) => {
  const b = builderOf(thread, 'glob');
  const [include, exclude, excludeDirs, allowEmpty] = unpackArgs('glob', args, kwargs, ['include?', 'exclude?', 'exclude_directories?', 'allow_empty?']);
  const ed = excludeDirs === undefined ? 1 : excludeDirs;
  if (typeof ed !== 'number' && typeof ed !== 'boolean') throw new StarlarkError('glob: for parameter exclude_directories: want int');
  if (allowEmpty !== undefined && typeof allowEmpty !== 'boolean') throw new StarlarkError('glob: for parameter allow_empty: want bool');
  try {
    const result = glob(
      { lister: b.workspace.lister, packageDir: b.workspace.dirOf(b.pkg) },
      {
        include: strings('glob', 'include', include),
        exclude: strings('glob', 'exclude', exclude),
        excludeDirectories: Number(ed) !== 0,
        allowEmpty: allowEmpty ?? true,
      },
    );
    return new StarList(result);
  } catch (e) {
    if (e instanceof GlobError) throw new StarlarkError(e.message, { cause: e });
    throw e;
  }
});

const selectBuiltin = new Builtin('select', (_t, args, kwargs) => {
  const [x, noMatch] = unpackArgs('select', args, kwargs, ['x', 'no_match_error?']);
  return makeSelect(x!, noMatch ?? '');
});

const exportsFiles = new Builtin('exports_files', (thread, args, kwargs) => {
  const b = builderOf(thread, 'exports_files');
  const [srcs, visibility] = unpackArgs('exports_files', args, kwargs, ['srcs', 'visibility?', 'licenses?']);
  const vis = visibility === undefined || visibility === None ? undefined : strings('exports_files', 'visibility', visibility).map((v) => labelString(v, b));
  const pos = callPosition(thread, b);
  for (const name of strings('exports_files', 'srcs', srcs)) {
    let label: Label;
    try {
      label = Label.parse(name, b.context);
    } catch (e) {
      throw new StarlarkError(`exports_files: ${(e as Error).message}`, { cause: e });
    }
    if (label.pkg !== b.pkg || label.repo !== b.repo) throw new StarlarkError(`exports_files: cannot export '${name}': not in the current package`);
    b.exportFile(label.name, pos, vis);
  }
  return None;
});

function labelString(raw: string, b: PackageBuilder): string {
  try {
    return Label.parse(raw, b.context).toString();
  } catch (e) {
    throw new StarlarkError((e as Error).message, { cause: e });
  }
}

const packageFn = new Builtin('package', (thread, args, kwargs) => {
  const b = builderOf(thread, 'package');
  if (args.length > 0) throw new StarlarkError('package: unexpected positional arguments');
  // Bazel's wording for a repeated call.
  if (b.packageCalled) throw new StarlarkError("'package' can only be used once per BUILD file");
  if ([...b.targets.values()].some((t) => t.kind === 'rule')) throw new StarlarkError('package() function cannot be called after rules');
  b.packageCalled = true;
  for (const [k, v] of kwargs ?? []) {
    switch (k) {
      case 'default_visibility':
        b.defaults.visibility = strings('package', k, v).map((s) => labelString(s, b));
        break;
      case 'default_testonly':
        // Bazel's boolean attribute type takes 0 and 1 too (skylib's tests write `default_testonly = 1`).
        if (typeof v !== 'boolean' && v !== 0 && v !== 1) throw new StarlarkError('package: for parameter default_testonly: want bool');
        b.defaults.testonly = v === true || v === 1;
        break;
      case 'default_deprecation':
        if (typeof v !== 'string') throw new StarlarkError('package: for parameter default_deprecation: want string');
        b.defaults.deprecation = v;
        break;
      case 'features':
        b.defaults.features = strings('package', k, v);
        break;
      case 'licenses':
      case 'default_applicable_licenses':
      case 'default_package_metadata':
      case 'default_compatible_with':
      case 'default_restricted_to':
      case 'default_hdrs_check':
      case 'default_copts':
        if (k === 'licenses') b.defaults.licenses = strings('package', k, v);
        break;
      default:
        throw new StarlarkError(`package: unexpected keyword argument "${k}"`);
    }
  }
  return None;
});

const licensesFn = new Builtin('licenses', (thread, args, kwargs) => {
  const b = builderOf(thread, 'licenses');
  const [types] = unpackArgs('licenses', args, kwargs, ['license_strings']);
  b.defaults.licenses = strings('licenses', 'license_strings', types);
  return None;
});

const packageGroup = new Builtin('package_group', (thread, args, kwargs) => {
  const b = builderOf(thread, 'package_group');
  const [name, packages, includes] = unpackArgs('package_group', args, kwargs, ['name', 'packages?', 'includes?']);
  if (typeof name !== 'string') throw new StarlarkError('package_group: for parameter name: want string');
  b.addPackageGroup({
    kind: 'package_group',
    name,
    location: callPosition(thread, b),
    packages: strings('package_group', 'packages', packages),
    includes: strings('package_group', 'includes', includes).map((s) => labelString(s, b)),
  });
  return None;
});

/** `package_relative_label(input)`: a string parsed relative to the package being built; a Label unchanged. */
const packageRelativeLabel = new Builtin('package_relative_label', (thread, args, kwargs) => {
  const b = builderOf(thread, 'package_relative_label');
  const [input] = unpackArgs('package_relative_label', args, kwargs, ['input']);
  if (input instanceof StarLabel) return input;
  if (typeof input !== 'string') throw new StarlarkError(`package_relative_label: for parameter input: got ${typeName(input!)}, want string or Label`);
  try {
    return new StarLabel(Label.parse(input, b.context));
  } catch (e) {
    throw new StarlarkError(`invalid label in package_relative_label: ${(e as Error).message}`, { cause: e });
  }
});

/** `module_name()`: the module of the package's repository (MODULE.bazel's `module(name = ...)`), else None. */
const moduleName = new Builtin('module_name', (thread, args, kwargs) => {
  const b = builderOf(thread, 'module_name');
  unpackArgs('module_name', args, kwargs, []);
  if (!existsSync(join(b.workspace.root, 'MODULE.bazel'))) return None;
  return readWorkspaceName(b.workspace.root) || (b.repo === '' ? None : b.repo);
});

/** `module_version()`: Kiln resolves no module versions, so None, as Bazel answers for a repository without one. */
const moduleVersion = new Builtin('module_version', (thread, args, kwargs) => {
  builderOf(thread, 'module_version');
  unpackArgs('module_version', args, kwargs, []);
  return None;
});

/**
 * `subpackages(include, exclude = [], allow_empty = False)`: the packages directly below this one
 * (no package between), as paths relative to it, that match `include` and not `exclude`.
 */
const subpackagesFn = new Builtin('subpackages', (thread, args, kwargs) => {
  const b = builderOf(thread, 'subpackages');
  const [include, exclude, allowEmpty] = unpackArgs('subpackages', args, kwargs, ['include', 'exclude?', 'allow_empty?']);
  if (allowEmpty !== undefined && typeof allowEmpty !== 'boolean') throw new StarlarkError('subpackages: for parameter allow_empty: want bool');
  const inc = strings('subpackages', 'include', include);
  const exc = strings('subpackages', 'exclude', exclude);
  const below = b.workspace.packagesUnder(b.pkg).filter((p) => p !== b.pkg);
  const prefix = b.pkg === '' ? '' : `${b.pkg}/`;
  const direct = below.filter((p) => !below.some((q) => q !== p && p.startsWith(`${q}/`))).map((p) => p.slice(prefix.length));
  const out = direct.filter((p) => inc.some((g) => globPatternMatches(g, p)) && !exc.some((g) => globPatternMatches(g, p)));
  if (out.length === 0 && allowEmpty !== true) {
    throw new StarlarkError(`subpackages pattern '${inc.join("', '")}' didn't match anything, but allow_empty is set to False`);
  }
  return new StarList(out);
});

const packageName = new Builtin('package_name', (thread) => builderOf(thread, 'package_name').pkg);
const repositoryName = new Builtin('repository_name', (thread) => `@${builderOf(thread, 'repository_name').repo}`);

/** Attribute values back into Starlark, as existing_rule() returns them (labels as strings). */
function toStarlark(v: AttrValue): Value {
  if (v === null) return None;
  if (typeof v !== 'object') return v;
  if (v instanceof SelectorList) return v.map(plainToStarlark);
  return plainToStarlark(v);
}

function plainToStarlark(v: PlainAttrValue): Value {
  if (v === null) return None;
  if (typeof v !== 'object') return v;
  const arr = v as readonly unknown[];
  if (arr.length > 0 && Array.isArray(arr[0])) {
    const d = new StarDict();
    for (const [k, x] of arr as [string, PlainAttrValue][]) d.set(k, plainToStarlark(x));
    return d;
  }
  return new StarList([...(arr as string[])]);
}

function ruleDict(t: Target): Value {
  if (t.kind !== 'rule') return None;
  const d = new StarDict();
  d.set('name', t.name);
  d.set('kind', t.ruleClass);
  for (const [k, v] of t.attrs) if (k !== 'name') d.set(k, toStarlark(v));
  return d;
}

const existingRule = new Builtin('existing_rule', (thread, args, kwargs) => {
  const b = builderOf(thread, 'existing_rule');
  const [name] = unpackArgs('existing_rule', args, kwargs, ['name']);
  if (typeof name !== 'string') throw new StarlarkError('existing_rule: for parameter name: want string');
  const t = b.targets.get(name);
  return t ? ruleDict(t) : None;
});

const existingRules = new Builtin('existing_rules', (thread) => {
  const b = builderOf(thread, 'existing_rules');
  const d = new StarDict();
  for (const t of b.targets.values()) if (t.kind === 'rule') d.set(t.name, ruleDict(t));
  return d;
});

/**
 * Native rules and BUILD functions of present-day Bazel that Kiln does not honour yet: each exists,
 * so BUILD files and macros that mention one load, and calling one fails, saying so.
 */
export const UNSUPPORTED_PACKAGE_FUNCTIONS: readonly string[] = [
  'environment_group',
  'environment',
  'action_listener',
  'extra_action',
  'config_feature_flag',
  'cc_import',
  'cc_shared_library',
  'cc_static_library',
  'cc_toolchain',
  'cc_toolchain_alias',
  'cc_toolchain_suite',
  'cc_libc_top_alias',
  'cc_host_toolchain_alias',
  'cc_proto_library',
  'fdo_prefetch_hints',
  'fdo_profile',
  'memprof_profile',
  'propeller_optimize',
  'java_binary',
  'java_import',
  'java_library',
  'java_lite_proto_library',
  'java_package_configuration',
  'java_plugin',
  'java_proto_library',
  'java_runtime',
  'java_test',
  'java_toolchain',
  'proto_library',
  'proto_lang_toolchain',
  'py_binary',
  'py_library',
  'py_runtime',
  'py_test',
  'objc_import',
  'objc_library',
  'available_xcodes',
  'xcode_config',
  'xcode_config_alias',
  'xcode_version',
  'android_binary',
  'android_library',
  'android_local_test',
  'android_sdk',
  'android_tools_defaults_jar',
  'aar_import',
];

/** Functions shared by BUILD files and the `native` module. */
export function packageFunctions(ruleClasses: Iterable<RuleClass>): Map<string, Value> {
  const m = new Map<string, Value>();
  for (const rc of ruleClasses) m.set(rc.name, ruleFunction(rc));
  for (const f of [
    globBuiltin,
    exportsFiles,
    packageGroup,
    existingRule,
    existingRules,
    packageName,
    repositoryName,
    licensesFn,
    packageRelativeLabel,
    moduleName,
    moduleVersion,
    subpackagesFn,
  ])
    m.set(f.name, f);
  for (const [name, v] of unsupportedEntries(UNSUPPORTED_PACKAGE_FUNCTIONS, 'function')) if (!m.has(name)) m.set(name, v);
  return m;
}

export function nativeModule(functions: Map<string, Value>): StarModule {
  return new StarModule('native', functions);
}

export { packageFn, selectBuiltin };
