import { ActionValue } from './action-value.js';
import { DEFAULT_INFO, depsetOf, OUTPUT_GROUP_INFO, Provider, ProviderInstance, StarLabel, Label } from '../../loading/index.js';
import { hashValue, None, StarList, StarObject, StarStruct, StarlarkError, typeName, type Value } from '../../starlark/index.js';
import type { ConfiguredTarget, FileEntry } from '../configured/configured-target.js';
import { fileValueOf } from './file-value.js';
import { RunfilesValue } from './runfiles-value.js';

const defaultInfos = new WeakMap<ConfiguredTarget, ProviderInstance>();

/** Rules whose single output is the program `bazel run` starts. */
const EXECUTABLE_RULE_CLASSES = new Set(['sh_binary', 'sh_test']);

/** The program of a target: a Starlark rule's executable, an sh_binary's copy, an executable genrule's out. */
export function executableOf(ct: ConfiguredTarget): FileEntry | undefined {
  if (ct.executable) return ct.executable;
  const rule = ct.target.kind === 'rule' ? ct.target : undefined;
  if (rule && (EXECUTABLE_RULE_CLASSES.has(ct.kindName) || (ct.kindName === 'genrule' && rule.attrs.get('executable') === true))) return ct.files[0];
  return undefined;
}

function runfilesOf(entries: readonly FileEntry[]): RunfilesValue {
  return new RunfilesValue(depsetOf(entries.map(fileValueOf)));
}

/**
 * The DefaultInfo of any configured target: what a Starlark rule returned, or, for built-in rules
 * and files, one made from its files, runfiles and executable (so `dep[DefaultInfo]` works on every
 * target).
 */
export function defaultInfoOf(ct: ConfiguredTarget): ProviderInstance {
  const own = ct.providers?.get(DEFAULT_INFO.key);
  if (own) return own;
  let info = defaultInfos.get(ct);
  if (!info) {
    const runfiles = runfilesOf(ct.runfiles);
    const executable = executableOf(ct);
    info = new ProviderInstance(DEFAULT_INFO, [
      ['files', depsetOf(ct.files.map(fileValueOf))],
      ['default_runfiles', runfiles],
      ['data_runfiles', runfiles],
      ['files_to_run', filesToRun(executable)],
      ...(executable ? ([['executable', fileValueOf(executable)]] as [string, Value][]) : []),
    ]);
    defaultInfos.set(ct, info);
  }
  return info;
}

function filesToRun(executable: FileEntry | undefined): StarStruct {
  return new StarStruct([['executable', executable ? fileValueOf(executable) : None]]);
}

function outputGroupInfoOf(ct: ConfiguredTarget): ProviderInstance | undefined {
  const own = ct.providers?.get(OUTPUT_GROUP_INFO.key);
  if (own || ct.outputGroups.size === 0) return own;
  return new ProviderInstance(
    OUTPUT_GROUP_INFO,
    [...ct.outputGroups].map(([name, files]) => [name, depsetOf(files.map(fileValueOf))] as [string, Value]),
  );
}

/** A provider of a configured target, or undefined. */
function providerOf(ct: ConfiguredTarget, provider: Provider): ProviderInstance | undefined {
  if (provider.key === DEFAULT_INFO.key) return defaultInfoOf(ct);
  if (provider.key === OUTPUT_GROUP_INFO.key) return outputGroupInfoOf(ct);
  return ct.providers?.get(provider.key);
}

const actionLists = new WeakMap<ConfiguredTarget, StarList>();

function actionList(ct: ConfiguredTarget): StarList {
  let list = actionLists.get(ct);
  if (!list) {
    list = new StarList(ct.actions.map((a) => new ActionValue(a)));
    list.frozen = true;
    actionLists.set(ct, list);
  }
  return list;
}

/** Bazel's `Target`: a dependency as a rule implementation sees it (`dep.label`, `dep[MyInfo]`). */
export class TargetValue extends StarObject {
  constructor(readonly configured: ConfiguredTarget) {
    super();
  }
  get type(): string {
    return 'Target';
  }
  override hash(): number {
    return hashValue(this.configured.label);
  }
  override equals(other: StarObject): boolean {
    return other instanceof TargetValue && other.configured === this.configured;
  }
  getIndex(key: Value): Value {
    if (!(key instanceof Provider)) throw new StarlarkError(`Type Target only supports indexing by object constructors, got ${typeName(key)} instead`);
    const p = providerOf(this.configured, key);
    if (!p) throw new StarlarkError(`${this.repr()} (rule '${this.configured.kindName}') doesn't contain declared provider '${key.name}'`);
    return p;
  }
  override binary(op: string, other: Value, side: 'left' | 'right'): Value | undefined {
    if (op !== 'in' || side !== 'right') return undefined;
    if (!(other instanceof Provider)) throw new StarlarkError(`Type Target only supports querying by object constructors, got ${typeName(other)} instead`);
    return providerOf(this.configured, other) !== undefined;
  }
  override attr(name: string): Value | undefined {
    const info = defaultInfoOf(this.configured);
    switch (name) {
      case 'label':
        return new StarLabel(Label.parse(this.configured.label));
      case 'files':
        return info.field('files') ?? depsetOf([]);
      case 'files_to_run':
        return info.field('files_to_run') ?? filesToRun(undefined);
      case 'default_runfiles':
      case 'data_runfiles':
        return info.field(name) ?? RunfilesValue.EMPTY;
      case 'actions':
        // The actions the target registered, for analysis tests (Bazel's RuleConfiguredTarget `actions`).
        return this.configured.target.kind === 'rule' ? actionList(this.configured) : None;
      default:
        return undefined;
    }
  }
  override attrNames(): string[] {
    return ['actions', 'data_runfiles', 'default_runfiles', 'files', 'files_to_run', 'label'];
  }
  repr(): string {
    return `<target ${this.configured.label}>`;
  }
}
