import {
  CONSTRAINT_VALUE_INFO,
  ProviderInstance,
  TOOLCHAIN_INFO,
  SelectorList,
  Label,
  StarLabel,
  type RuleClass,
  type AttributeSpec,
  Depset,
  depsetOf,
  implicitOutputName,
  type StarlarkRuleFunction,
} from '../../loading/index.js';
import {
  Builtin,
  None,
  StarDict,
  StarList,
  StarObject,
  StarStruct,
  StarTuple,
  StarlarkError,
  repr,
  typeName,
  unpackArgs,
  type ReprPath,
  type Value,
} from '../../starlark/index.js';
import type { ConfiguredTarget, FileEntry } from '../configured/configured-target.js';
import type { RuleContext, ToolchainContext } from '../configured/rule-context.js';
import { siblingLabel, targetNameOf } from '../configured/target-paths.js';
import { configurationMakeVariables } from '../expansion/configuration-make-variables.js';
import { ExpansionFailure, expandLocationFunctions, type LocationEntry } from '../expansion/location-expander.js';
import { expandMakeVariables } from '../expansion/make-variable-expander.js';
import { ActionsValue, type ActionRegistry } from './actions-value.js';
import { FileValue, fileValueOf } from './file-value.js';
import { FragmentsValue } from './fragments-value.js';
import { RunfilesValue, symlinkEntry } from './runfiles-value.js';
import { defaultInfoOf, executableOf, TargetValue } from './target-value.js';
import type { WorkspaceStatus } from './workspace-status.js';

/** Label attributes every rule has that name no dependency of the implementation. */
export const NON_DEPENDENCY_ATTRIBUTES: ReadonlySet<string> = new Set([
  'visibility',
  'compatible_with',
  'restricted_to',
  'target_compatible_with',
  'exec_compatible_with',
  'toolchains',
  'aspect_hints',
  'package_metadata',
]);

/**
 * The configured targets a Starlark rule's label attribute names, in the configuration its `cfg`
 * asks for (aspects read `ctx.rule.attr` through this too, so both see the same dependencies).
 */
export function dependenciesOf(rc: RuleContext, spec: AttributeSpec): AttributeDependencies {
  const transition = spec.starlark?.transition;
  if (!transition) return { targets: rc.deps(spec.name, { exec: spec.starlark?.cfg === 'exec', fallback: spec.defaultValue }) };
  const split = new Map<string, ConfiguredTarget[]>();
  for (const [key, config] of rc.transition(transition)) split.set(key, rc.deps(spec.name, { config, fallback: spec.defaultValue }));
  return { targets: [...split.values()].flat(), split };
}

/** An attribute's dependencies; with a Starlark transition (`cfg = transition(...)`), also by split key. */
export interface AttributeDependencies {
  readonly targets: ConfiguredTarget[];
  readonly split?: ReadonlyMap<string, ConfiguredTarget[]>;
}

/** What the implementation of one Starlark rule target sees besides its analysis context. */
interface StarlarkRuleEnvironment {
  /** The rule (absent for an aspect's ctx, which has a rule class of the aspect's attributes). */
  readonly rule?: StarlarkRuleFunction;
  readonly ruleClass: RuleClass;
  readonly registry: ActionRegistry;
  /** The main repository's name (`__main__` unless the WORKSPACE names it). */
  readonly workspaceName: string;
  /** `ctx.build_setting_value` of a build-setting rule. */
  readonly buildSettingValue?: Value;
  /** The build's workspace status files, made on first use. */
  readonly workspaceStatus?: () => WorkspaceStatus;
}

/** The dependencies of one label attribute, with the files the rule may use. */
interface AttributeDeps {
  readonly spec: AttributeSpec;
  readonly targets: readonly ConfiguredTarget[];
  readonly files: readonly FileEntry[];
  /** For an attribute with a Starlark transition (`cfg = transition(...)`): the targets of each split key. */
  readonly split?: ReadonlyMap<string, readonly ConfiguredTarget[]>;
}

function extensionMatches(path: string, allowed: readonly string[]): boolean {
  return allowed.some((ext) => path.endsWith(ext));
}

function expectation(allowed: true | readonly string[] | undefined): string {
  if (allowed === undefined) return 'expected no files';
  if (allowed === true) return 'expected any file';
  return `expected ${allowed.join(' or ')}`;
}

/**
 * A frozen list of immutable values (targets, labels, files, strings, numbers), as Bazel's ctx values
 * are: marked directly, without freeze()'s walk over elements that cannot change anyway.
 */
function frozenList(elems: Value[]): StarList {
  const list = new StarList(elems);
  list.frozen = true;
  return list;
}

/** Values of ctx.attr: Starlark lists and dicts are frozen, as Bazel's are. */
function starlarkValue(v: unknown): Value {
  if (v === null || v === undefined) return None;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return frozenList(v.map(starlarkValue));
  throw new Error(`unexpected attribute value ${JSON.stringify(v)}`);
}

function dictOf(entries: readonly (readonly [Value, Value])[]): StarDict {
  const d = new StarDict();
  for (const [k, v] of entries) d.set(k, v);
  d.freeze();
  return d;
}

/** What every target of one configuration shares: built once, immutable. */
interface ConfigurationMembers {
  readonly binDir: StarStruct;
  readonly genfilesDir: StarStruct;
  readonly vars: StarDict;
  readonly configuration: StarStruct;
}

const configurationMembers = new WeakMap<RuleContext['config'], ConfigurationMembers>();

function membersOf(config: RuleContext['config']): ConfigurationMembers {
  let m = configurationMembers.get(config);
  if (!m) {
    m = {
      binDir: new StarStruct([['path', config.outputDirectories.bin]]),
      genfilesDir: new StarStruct([['path', config.outputDirectories.genfiles]]),
      vars: dictOf([...configurationMakeVariables(config)]),
      configuration: new StarStruct([
        ['host_path_separator', ':'],
        ['default_shell_env', dictOf([])],
        ['test_env', dictOf([])],
        ['coverage_enabled', false],
        ['is_tool_configuration', config.isExec],
      ]),
    };
    configurationMembers.set(config, m);
  }
  return m;
}

/** A rule class's attributes split once: dependencies (analysed before the implementation runs) and outputs. */
interface ClassShape {
  readonly dependencies: readonly AttributeSpec[];
  readonly outputs: readonly AttributeSpec[];
  /** Every attribute name, sorted (what `dir(ctx.attr)` lists). */
  readonly names: readonly string[];
}

const shapes = new WeakMap<RuleClass, ClassShape>();

function shapeOf(ruleClass: RuleClass): ClassShape {
  let shape = shapes.get(ruleClass);
  if (!shape) {
    const specs = [...ruleClass.attributes.values()];
    shape = {
      dependencies: specs.filter(
        (spec) =>
          spec.starlark !== undefined &&
          (spec.type === 'label' || spec.type === 'label_list' || spec.type === 'label_keyed_string_dict') &&
          !NON_DEPENDENCY_ATTRIBUTES.has(spec.name),
      ),
      outputs: specs.filter((spec) => spec.type === 'output' || spec.type === 'output_list'),
      names: specs.map((spec) => spec.name).sort(),
    };
    shapes.set(ruleClass, shape);
  }
  return shape;
}

const EMPTY_STRUCT = new StarStruct([]);

/** What `dir(ctx)` lists. */
const CTX_MEMBERS = [
  'actions',
  'attr',
  'split_attr',
  'bin_dir',
  'build_file_path',
  'build_setting_value',
  'configuration',
  'coverage_instrumented',
  'disabled_features',
  'exec_groups',
  'executable',
  'expand_location',
  'expand_make_variables',
  'features',
  'file',
  'files',
  'fragments',
  'genfiles_dir',
  'info_file',
  'label',
  'outputs',
  'resolve_tools',
  'runfiles',
  'target_platform_has_constraint',
  'toolchains',
  'var',
  'version_file',
  'workspace_name',
].sort();

/**
 * Builds Bazel's `ctx` for one rule target: analyses the dependencies first (checking allow_files,
 * allow_single_file, executable and providers, as Bazel does before the implementation runs),
 * resolves other attributes when the implementation reads them, and exposes files, outputs,
 * actions and the configuration's variables.
 */
export class CtxValue extends StarObject {
  /** Members made when first read. */
  private readonly members = new Map<string, Value>();
  /** The label attributes' dependencies, in the rule class's attribute order. */
  private readonly deps = new Map<string, AttributeDeps>();
  private readonly attrs: AttrsValue;
  private readonly actions: ActionsValue;
  private readonly outputs: OutputsValue;
  /** The predeclared outputs with their target names, for `$(location)`. */
  private readonly outputNames: [string, FileValue][] = [];

  constructor(
    private readonly rc: RuleContext,
    private readonly env: StarlarkRuleEnvironment,
  ) {
    super();
    this.actions = new ActionsValue(env.registry);
    const shape = shapeOf(env.ruleClass);
    const attrValues = new Map<string, Value>();
    for (const spec of shape.dependencies) attrValues.set(spec.name, this.attributeValue(spec));
    // select()s are resolved before the implementation runs, as in Bazel, so a select with no match fails even unread.
    // (An aspect's ctx has the aspect's attributes, not the target's: only the class's own are resolved here.)
    for (const [name, raw] of rc.target.attrs) {
      const spec = env.ruleClass.attributes.get(name);
      if (spec && !attrValues.has(name) && raw instanceof SelectorList) attrValues.set(name, this.attributeValue(spec));
    }
    this.outputs = new OutputsValue(rc, env, this.ownOutputs(shape));
    this.attrs = new AttrsValue(shape.names, (name) => {
      let v = attrValues.get(name);
      if (v === undefined) {
        const spec = env.ruleClass.attributes.get(name);
        if (!spec) return undefined;
        v = this.attributeValue(spec);
        attrValues.set(name, v);
      }
      return v;
    });
  }

  /** `ctx.files`, `ctx.file` and `ctx.executable`, made from the analysed dependencies when first read. */
  private dependencyFiles(kind: 'files' | 'file' | 'executable'): StarStruct {
    const fields: [string, Value][] = [];
    for (const { spec, targets, files } of this.deps.values()) {
      const options = spec.starlark!;
      if (kind === 'files') fields.push([spec.name, frozenList(files.map(fileValueOf))]);
      else if (kind === 'file' && options.singleFile) fields.push([spec.name, files[0] ? fileValueOf(files[0]) : None]);
      else if (kind === 'executable' && options.executable) {
        const program = targets[0] ? (executableOf(targets[0]) ?? (targets[0].files.length === 1 ? targets[0].files[0] : undefined)) : undefined;
        fields.push([spec.name, program ? fileValueOf(program) : None]);
      }
    }
    return fields.length === 0 ? EMPTY_STRUCT : new StarStruct(fields);
  }

  get type(): string {
    return 'ctx';
  }

  /** Files of output attributes and implicit outputs, in declaration order, by attribute or key. */
  private ownOutputs(shape: ClassShape): [string, FileValue | FileValue[] | null][] {
    const out: [string, FileValue | FileValue[] | null][] = [];
    const root = this.env.registry.owner.root;
    const toBindir = root === this.rc.config.outputDirectories.bin;
    const fileOf = (name: string) => {
      const f = fileValueOf(this.rc.outputFile(name, toBindir));
      this.env.registry.adopt(f);
      this.outputNames.push([name, f]);
      return f;
    };
    // Output attributes hold labels of this package (canonical or relative).
    const here = Label.parse(this.rc.target.label);
    const nameOf = (label: string) => Label.parse(label, here).name;
    for (const spec of shape.outputs) {
      if (spec.type === 'output') {
        const v = this.rc.target.attrs.get(spec.name);
        out.push([spec.name, typeof v === 'string' ? fileOf(nameOf(v)) : null]);
      } else {
        const v = this.rc.target.attrs.get(spec.name);
        out.push([spec.name, Array.isArray(v) ? (v as string[]).map((l) => fileOf(nameOf(l))) : []]);
      }
    }
    const name = nameOf(this.rc.target.label);
    for (const [key, template] of this.env.ruleClass.starlark?.implicitOutputs ?? []) {
      const file = implicitOutputName(template, name, this.rc.target.attrs as ReadonlyMap<string, never>);
      if (file !== undefined) out.push([key, fileOf(file)]);
    }
    return out;
  }

  /** The predeclared outputs (output attributes, implicit outputs): a rule's default files. */
  predeclaredOutputs(): readonly FileValue[] {
    return this.outputs.predeclared();
  }

  /** ctx.outputs.executable, when the implementation asked for it. */
  executableOutput(): FileValue | undefined {
    return this.outputs.executableFile;
  }

  private attributeValue(spec: AttributeSpec): Value {
    const rc = this.rc;
    const raw = rc.attr<unknown>(spec.name, spec.defaultValue, spec.configurable);
    switch (spec.type) {
      case 'label':
      case 'label_list':
      case 'label_keyed_string_dict': {
        if (NON_DEPENDENCY_ATTRIBUTES.has(spec.name) || !spec.starlark) {
          const labels = (typeof raw === 'string' ? [raw] : Array.isArray(raw) ? (raw as unknown[]).map((e) => (Array.isArray(e) ? e[0] : e)) : []) as string[];
          const values = labels.map((l) => new StarLabel(Label.parse(rc.canonicalize(l) ?? l)));
          return spec.type === 'label' ? (values[0] ?? None) : frozenList(values);
        }
        const targets = this.analyzeDeps(spec);
        const values = targets.map((t) => new TargetValue(t));
        // Bazel: an attribute with a Starlark transition is a list in ctx.attr, even a label one (1:1 or split).
        if (spec.type === 'label' && this.deps.get(spec.name)?.split) return frozenList(values);
        if (spec.type === 'label') return values[0] ?? None;
        if (spec.type === 'label_list') return frozenList(values);
        const pairs = (raw as [string, string][]) ?? [];
        return dictOf(pairs.map(([, s], i) => [values[i]!, s] as const));
      }
      case 'output':
        return typeof raw === 'string' ? new StarLabel(Label.parse(raw)) : None;
      case 'output_list':
        return frozenList(((raw as string[]) ?? []).map((l) => new StarLabel(Label.parse(l))));
      case 'string_dict':
        return dictOf(((raw as [string, string][]) ?? []).map(([k, v]) => [k, v] as const));
      case 'string_list_dict':
        return dictOf(((raw as [string, string[]][]) ?? []).map(([k, v]) => [k, frozenList([...v])] as const));
      default:
        return starlarkValue(raw);
    }
  }

  /** Analyses one label attribute's dependencies and checks them against the attribute's options. */
  private analyzeDeps(spec: AttributeSpec): ConfiguredTarget[] {
    const options = spec.starlark!;
    const rc = this.rc;
    const direct = dependenciesOf(rc, spec);
    // Aspects (`attr.label(aspects = ...)`) apply to each configuration's dependencies alike.
    const withAspects = (deps: ConfiguredTarget[]) => (options.aspects && rc.applyAspects ? rc.applyAspects(deps, options.aspects) : deps);
    const split = direct.split && new Map([...direct.split].map(([key, deps]) => [key, withAspects(deps)] as const));
    const targets = split ? [...split.values()].flat() : withAspects(direct.targets);
    if (!options.allowEmpty && targets.length === 0 && spec.type !== 'label') throw rc.error(spec.name, 'attribute must be non empty');
    const files: FileEntry[] = [];
    const allowed = options.allowFiles;
    for (const dep of targets) {
      const kind = dep.target.kind;
      if (kind === 'source' || kind === 'generated') {
        const what = kind === 'source' ? 'source file' : 'generated file';
        if (allowed === undefined || (allowed !== true && !extensionMatches(dep.label, allowed))) {
          throw rc.error(spec.name, `${what} '${dep.label}' is misplaced here (${expectation(allowed)})`);
        }
      }
      const usable = allowed === undefined || allowed === true ? dep.files : dep.files.filter((f) => extensionMatches(f.artifact.execPath, allowed));
      if (allowed !== undefined && allowed !== true && dep.files.length > 0 && usable.length === 0) {
        throw rc.error(spec.name, `'${dep.label}' does not produce any ${rc.target.ruleClass} ${spec.name} files (${expectation(allowed)})`);
      }
      if (options.singleFile && usable.length !== 1) throw rc.error(spec.name, `'${dep.label}' must produce a single file`);
      if (options.executable && !executableOf(dep) && dep.files.length !== 1)
        throw rc.error(spec.name, `${dep.label} does not refer to a valid executable target`);
      if (options.providers.length > 0) {
        const has = (key: string) => key === 'DefaultInfo' || dep.providers?.has(key) === true || (key === 'OutputGroupInfo' && dep.outputGroups.size > 0);
        if (!options.providers.some((set) => set.every((p) => has(p.key)))) {
          const alternatives = options.providers.map((set) => `'${set.map((p) => p.name).join("', '")}'`).join(' or ');
          throw rc.error(spec.name, `'${dep.label}' does not have mandatory providers: ${alternatives}`);
        }
      }
      for (const file of usable) files.push(file);
    }
    this.deps.set(spec.name, { spec, targets, files, ...(split ? { split } : {}) });
    return targets;
  }

  /** The files `$(location)` may name: dependencies of every label attribute, and the rule's outputs. */
  private locationEntries(extra: readonly TargetValue[]): Map<string, LocationEntry> {
    const map = new Map<string, LocationEntry>();
    const add = (label: string, entries: readonly FileEntry[]) => {
      map.set(label, { execPaths: entries.map((e) => e.artifact.execPath), rootPaths: entries.map((e) => e.rootPath) });
    };
    for (const deps of this.deps.values()) for (const t of deps.targets) add(t.label, t.files);
    for (const t of extra) add(t.configured.label, t.configured.files);
    for (const [name, f] of this.outputNames) add(siblingLabel(this.rc.target.label, name), [f.entry]);
    return map;
  }

  override attr(name: string): Value | undefined {
    const member = this.members.get(name);
    if (member !== undefined) return member;
    switch (name) {
      case 'attr':
        return this.attrs;
      case 'split_attr':
        return this.remember(name, this.splitAttributes());
      case 'files':
      case 'file':
      case 'executable':
        return this.remember(name, this.dependencyFiles(name));
      case 'bin_dir':
        return membersOf(this.rc.config).binDir;
      case 'genfiles_dir':
        return membersOf(this.rc.config).genfilesDir;
      case 'var':
        return membersOf(this.rc.config).vars;
      case 'configuration':
        return membersOf(this.rc.config).configuration;
      case 'workspace_name':
        return this.env.workspaceName;
      case 'build_setting_value':
        return this.env.buildSettingValue ?? None;
      case 'fragments':
        // An aspect's ctx (no rule) reads any fragment: Kiln keeps no aspect(fragments = ...).
        return this.remember(name, new FragmentsValue(this.env.ruleClass.name, this.env.rule?.options.fragments, this.rc.config));
      case 'build_file_path':
        return this.rc.target.location.file;
      case 'label':
        return this.remember(name, new StarLabel(Label.parse(this.rc.target.label)));
      case 'features':
      case 'disabled_features': {
        const features = [...this.rc.attr<readonly string[]>('features', [], true), ...this.rc.config.options.getList('features')];
        this.members.set('features', frozenList(features.filter((f) => !f.startsWith('-'))));
        this.members.set('disabled_features', frozenList(features.filter((f) => f.startsWith('-')).map((f) => f.slice(1))));
        return this.members.get(name);
      }
      case 'toolchains':
        return this.remember(name, new ToolchainsValue(this.rc, () => this.rc.toolchainContext()));
      case 'exec_groups':
        return this.remember(name, new ExecGroupsValue(this.rc));
      case 'target_platform_has_constraint':
        return this.remember(
          name,
          new Builtin('target_platform_has_constraint', (_t, args, kwargs) => {
            const [value] = unpackArgs('target_platform_has_constraint', args, kwargs, ['constraintValue']);
            const setting = value instanceof ProviderInstance ? value.field('constraint') : undefined;
            const label = value instanceof ProviderInstance ? value.field('label') : undefined;
            const settingLabel = setting instanceof ProviderInstance ? setting.field('label') : undefined;
            if (
              value instanceof ProviderInstance &&
              value.provider.key === CONSTRAINT_VALUE_INFO.key &&
              label instanceof StarLabel &&
              settingLabel instanceof StarLabel
            ) {
              return this.rc.config.platform.has({ label: label.label.toString(), setting: settingLabel.label.toString() });
            }
            throw new StarlarkError(`target_platform_has_constraint: for parameter constraintValue: got ${typeName(value!)}, want ConstraintValueInfo`);
          }),
        );
      case 'runfiles':
      case 'expand_location':
      case 'expand_make_variables':
      case 'coverage_instrumented':
      case 'resolve_tools':
        return this.remember(name, this.method(name));
      case 'info_file':
      case 'version_file': {
        const status = this.env.workspaceStatus?.();
        if (!status) return undefined;
        return new FileValue(name === 'info_file' ? status.stable : status.volatile, '//:workspace_status');
      }
      case 'actions':
        return this.actions;
      case 'outputs':
        return this.outputs;
      default:
        return undefined;
    }
  }

  /**
   * `ctx.split_attr`: for each attribute with a Starlark transition, its split keys to the target
   * (label) or targets (label_list) in that branch, as Bazel's StarlarkRuleContext.getSplitAttr.
   */
  private splitAttributes(): StarStruct {
    const fields: [string, Value][] = [];
    for (const { spec, split } of this.deps.values()) {
      if (!split) continue;
      fields.push([
        spec.name,
        dictOf(
          [...split].map(([key, targets]) => {
            const values = targets.map((t) => new TargetValue(t));
            return [key, spec.type === 'label' ? (values[0] ?? None) : frozenList(values)] as const;
          }),
        ),
      ]);
    }
    return fields.length === 0 ? EMPTY_STRUCT : new StarStruct(fields);
  }

  /** Keeps a member made when first read. */
  private remember(name: string, value: Value): Value {
    this.members.set(name, value);
    return value;
  }

  /** The builtins of ctx, made once per target when first read. */
  private method(name: 'runfiles' | 'expand_location' | 'expand_make_variables' | 'coverage_instrumented' | 'resolve_tools'): Builtin {
    switch (name) {
      case 'runfiles':
        return new Builtin('runfiles', (_t, args, kwargs) => this.runfiles(args, kwargs));
      case 'expand_location':
        return new Builtin('expand_location', (_t, args, kwargs) => {
          const [input, targets] = unpackArgs('expand_location', args, kwargs, ['input', 'targets?']);
          if (typeof input !== 'string') throw new StarlarkError(`expand_location: for parameter input: got ${typeName(input!)}, want string`);
          const extra =
            targets === undefined || targets === None ? [] : targets instanceof StarList || targets instanceof StarTuple ? targets.elems : undefined;
          if (!extra || extra.some((t) => !(t instanceof TargetValue)))
            throw new StarlarkError('expand_location: for parameter targets: want a sequence of Targets');
          try {
            return expandLocationFunctions(input, {
              prerequisites: this.locationEntries(extra as TargetValue[]),
              canonicalize: (raw) => this.rc.canonicalize(raw),
            });
          } catch (e) {
            if (e instanceof ExpansionFailure) throw new StarlarkError(e.message, { cause: e });
            throw e;
          }
        });
      case 'expand_make_variables':
        return new Builtin('expand_make_variables', (_t, args, kwargs) => {
          const [attribute, command, additional] = unpackArgs('expand_make_variables', args, kwargs, ['attribute_name', 'command', 'additional_substitutions']);
          if (typeof command !== 'string') throw new StarlarkError(`expand_make_variables: for parameter command: got ${typeName(command!)}, want string`);
          if (!(additional instanceof StarDict))
            throw new StarlarkError(`expand_make_variables: for parameter additional_substitutions: got ${typeName(additional!)}, want dict`);
          const vars = configurationMakeVariables(this.rc.config);
          try {
            return expandMakeVariables(command, (n) => {
              const v = additional.get(n);
              return typeof v === 'string' ? v : vars.get(n);
            });
          } catch (e) {
            if (e instanceof ExpansionFailure) throw new StarlarkError(`${String(attribute)}: ${e.message}`, { cause: e });
            throw e;
          }
        });
      case 'coverage_instrumented':
        return new Builtin('coverage_instrumented', (_t, args, kwargs) => (unpackArgs('coverage_instrumented', args, kwargs, ['target?']), false));
      case 'resolve_tools':
        // Bazel's resolve_tools: the files the tools need to run (each one's executable and runfiles),
        // and their runfiles manifests, which Kiln's actions do not need (an empty list).
        return new Builtin('resolve_tools', (_t, args, kwargs) => {
          if (args.length > 0) throw new StarlarkError(`resolve_tools() accepts no more than 0 positional arguments but got ${args.length}`);
          const [tools] = unpackArgs('resolve_tools', [], kwargs, ['tools?']);
          const list = tools === undefined ? [] : tools instanceof StarList || tools instanceof StarTuple ? tools.elems : undefined;
          if (!list || list.some((t) => !(t instanceof TargetValue))) throw new StarlarkError('resolve_tools: for parameter tools: want a sequence of Targets');
          const files: FileEntry[] = [];
          for (const tool of list as TargetValue[]) {
            const exe = executableOf(tool.configured);
            files.push(...(exe ? [exe] : tool.configured.files), ...tool.configured.runfiles);
          }
          const seen = new Set<string>();
          const unique = files.filter((f) => (seen.has(f.artifact.execPath) ? false : (seen.add(f.artifact.execPath), true)));
          return new StarTuple([depsetOf(unique.map(fileValueOf)), new StarList([])]);
        });
    }
  }

  override attrNames(): string[] {
    return [...CTX_MEMBERS];
  }

  /** `ctx.runfiles(files, transitive_files, collect_data, collect_default, symlinks, root_symlinks)`. */
  private runfiles(args: Value[], kwargs: [string, Value][] | null): RunfilesValue {
    const [files, transitive, collectData, collectDefault, symlinks, rootSymlinks] = unpackArgs('runfiles', args, kwargs, [
      'files?',
      'transitive_files?',
      'collect_data?',
      'collect_default?',
      'symlinks?',
      'root_symlinks?',
    ]);
    const direct = files === undefined || files === None ? [] : files instanceof StarList || files instanceof StarTuple ? files.elems : undefined;
    if (!direct || direct.some((f) => !(f instanceof FileValue))) throw new StarlarkError('runfiles: for parameter files: want a sequence of Files');
    if (transitive !== undefined && transitive !== None && !(transitive instanceof Depset))
      throw new StarlarkError(`runfiles: for parameter transitive_files: got ${typeName(transitive)}, want depset or None`);
    const merged: RunfilesValue[] = [];
    if (collectData === true || collectDefault === true) {
      for (const name of ['srcs', 'deps', 'data']) {
        for (const t of this.deps.get(name)?.targets ?? []) {
          const info = defaultInfoOf(t);
          const r = info.field(collectDefault === true ? 'default_runfiles' : 'data_runfiles');
          if (r instanceof RunfilesValue) merged.push(r);
          if (collectData === true && t.target.kind !== 'rule') merged.push(new RunfilesValue(depsetOf(t.files.map(fileValueOf))));
        }
      }
    }
    const links = (v: Value | undefined, param: string) => {
      if (v === undefined || v === None) return Depset.EMPTY;
      if (!(v instanceof StarDict)) throw new StarlarkError(`runfiles: for parameter ${param}: got ${typeName(v)}, want dict`);
      const entries: Value[] = [];
      for (const k of v.iterate()) {
        const target = v.get(k)!;
        if (typeof k !== 'string' || !(target instanceof FileValue)) throw new StarlarkError(`runfiles: for parameter ${param}: want a dict of string to File`);
        entries.push(symlinkEntry(k, target));
      }
      return depsetOf(entries);
    };
    const own = new RunfilesValue(
      depsetOf(direct, transitive instanceof Depset ? [transitive] : []),
      links(symlinks, 'symlinks'),
      links(rootSymlinks, 'root_symlinks'),
    );
    return merged.length === 0 ? own : own.merge(merged);
  }

  repr(): string {
    return `<rule context for ${this.rc.target.label}>`;
  }
}

/** `ctx.outputs`: output attributes, implicit outputs, and `executable` (declared when first asked for). */
class OutputsValue extends StarObject {
  executableFile: FileValue | undefined;
  constructor(
    private readonly rc: RuleContext,
    private readonly env: StarlarkRuleEnvironment,
    private readonly own: readonly [string, FileValue | FileValue[] | null][],
  ) {
    super();
  }
  get type(): string {
    return 'ctx.outputs';
  }
  private predeclaredFiles: readonly FileValue[] | undefined;
  predeclared(): readonly FileValue[] {
    return (this.predeclaredFiles ??= this.own.flatMap(([, v]) => (v === null ? [] : Array.isArray(v) ? v : [v])));
  }
  override attr(name: string): Value | undefined {
    if (name === 'executable' && this.env.ruleClass.executable) {
      this.executableFile ??= this.env.registry.declare('ctx.outputs.executable', targetNameOf(this.rc.target.label), undefined);
      return this.executableFile;
    }
    const entry = this.own.find(([k]) => k === name);
    if (!entry) return undefined;
    const v = entry[1];
    return v === null ? None : Array.isArray(v) ? new StarList(v) : v;
  }
  override attrNames(): string[] {
    return [...this.own.map(([k]) => k), ...(this.env.ruleClass.executable ? ['executable'] : [])].sort();
  }
  repr(): string {
    return 'ctx.outputs(for ' + this.rc.target.label + ')';
  }
}

/**
 * `ctx.attr`: a struct whose fields are resolved when first read (dependencies were analysed
 * already), so an implementation pays only for the attributes it uses.
 */
export class AttrsValue extends StarObject {
  constructor(
    private readonly names: readonly string[],
    private readonly fieldOf: (name: string) => Value | undefined,
  ) {
    super();
  }
  get type(): string {
    return 'struct';
  }
  override attr(name: string): Value | undefined {
    return this.fieldOf(name);
  }
  override attrNames(): string[] {
    return [...this.names];
  }
  repr(path: ReprPath): string {
    return `struct(${this.names.map((n) => `${n} = ${repr(this.fieldOf(n)!, path)}`).join(', ')})`;
  }
}

/**
 * `ctx.toolchains`: the resolved toolchains by type (a label string, relative to the target's
 * package, or a Label): the `ToolchainInfo` of the toolchain's target, None for an optional type
 * that resolved to nothing.
 */
class ToolchainsValue extends StarObject {
  constructor(
    private readonly rc: RuleContext,
    private readonly context: () => ToolchainContext,
  ) {
    super();
  }
  get type(): string {
    return 'ToolchainContext';
  }
  private typeOf(key: Value): string {
    if (key instanceof StarLabel) return key.label.toString();
    if (typeof key === 'string') return this.rc.canonicalize(key) ?? key;
    throw new StarlarkError(`Toolchains only supports indexing by toolchain type, got ${typeName(key)} instead`);
  }
  getIndex(key: Value): Value {
    const type = this.typeOf(key);
    const { toolchains } = this.context();
    if (!toolchains.has(type)) {
      throw new StarlarkError(
        `In ${this.rc.target.label}, toolchain type ${type} was requested but only types [${[...toolchains.keys()].join(', ')}] are configured`,
      );
    }
    const ct = toolchains.get(type);
    if (!ct) return None;
    const info = ct.providers?.get(TOOLCHAIN_INFO.key);
    if (!info) throw new StarlarkError(`toolchain ${ct.label} of type ${type} does not provide ToolchainInfo`);
    return info;
  }
  override binary(op: string, other: Value, side: 'left' | 'right'): Value | undefined {
    if (op !== 'in' || side !== 'right') return undefined;
    return this.context().toolchains.has(this.typeOf(other));
  }
  repr(): string {
    return `<toolchain_context.resolved_labels: ${[...this.context().toolchains.keys()].join(', ')}>`;
  }
}

/** `ctx.exec_groups`: the rule's exec groups by name, each with its own `toolchains`. */
class ExecGroupsValue extends StarObject {
  constructor(private readonly rc: RuleContext) {
    super();
  }
  get type(): string {
    return 'ExecGroupCollection';
  }
  getIndex(key: Value): Value {
    if (typeof key !== 'string') throw new StarlarkError(`Exec groups only support indexing by exec group name, got ${typeName(key)} instead`);
    const context = this.rc.execGroupContext(key);
    if (!context) {
      throw new StarlarkError(
        `In ${this.rc.target.label}, unrecognized exec group '${key}' requested. Available exec groups: [${this.rc.execGroupNames.join(', ')}]`,
      );
    }
    return new StarStruct([['toolchains', new ToolchainsValue(this.rc, () => context)]]);
  }
  override binary(op: string, other: Value, side: 'left' | 'right'): Value | undefined {
    if (op !== 'in' || side !== 'right') return undefined;
    return typeof other === 'string' && this.rc.execGroupNames.includes(other);
  }
  repr(): string {
    return `<exec_groups: ${this.rc.execGroupNames.join(', ')}>`;
  }
}
