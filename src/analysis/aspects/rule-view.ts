import { Label, StarLabel, type AttributeSpec, type RuleClass } from '../../loading/index.js';
import { None, StarDict, StarList, StarObject, StarStruct, type Value } from '../../starlark/index.js';
import type { ConfiguredTarget, RuleAnalysisTarget } from '../configured/configured-target.js';
import type { RuleContext } from '../configured/rule-context.js';
import { AttrsValue, NON_DEPENDENCY_ATTRIBUTES } from '../starlark/ctx-value.js';
import { fileValueOf } from '../starlark/file-value.js';
import { executableOf, TargetValue } from '../starlark/target-value.js';

/** Native rules' attributes whose dependencies are analysed in the exec configuration. */
const NATIVE_EXEC_ATTRIBUTES = new Set(['tools', 'exec_tools']);

/** A label attribute whose values are dependencies (Targets), as opposed to labels only named. */
export function isDependencyAttribute(spec: AttributeSpec): boolean {
  return (spec.type === 'label' || spec.type === 'label_list' || spec.type === 'label_keyed_string_dict') && !NON_DEPENDENCY_ATTRIBUTES.has(spec.name);
}

/** Whether the attribute's dependencies are in the exec configuration. */
export function isExecAttribute(spec: AttributeSpec): boolean {
  return spec.starlark ? spec.starlark.cfg === 'exec' : NATIVE_EXEC_ATTRIBUTES.has(spec.name);
}

function frozen(elems: Value[]): StarList {
  const list = new StarList(elems);
  list.frozen = true;
  return list;
}

/** An attribute value that is not a dependency, as `ctx.rule.attr` shows it. */
function plainValue(spec: AttributeSpec, v: unknown, rc: RuleContext): Value {
  if (v === null || v === undefined) return None;
  const label = (raw: string) => new StarLabel(Label.parse(rc.canonicalize(raw) ?? raw));
  if (spec.type === 'label' || spec.type === 'output') return typeof v === 'string' ? label(v) : None;
  if (spec.type === 'label_list' || spec.type === 'output_list') return frozen((v as string[]).map(label));
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) {
    // Dicts are entry lists ([key, value] pairs); other lists hold plain values.
    if (spec.type.endsWith('_dict')) {
      const d = new StarDict();
      for (const [k, x] of v as [string, unknown][]) d.set(k, Array.isArray(x) ? frozen(x as Value[]) : (x as Value));
      d.freeze();
      return d;
    }
    return frozen(v as Value[]);
  }
  return None;
}

/** The dependencies of one attribute, as the aspect sees them (with the aspects propagated along it merged in). */
export type DependencyView = (spec: AttributeSpec) => readonly ConfiguredTarget[];

/**
 * `ctx.rule` of an aspect's implementation: the rule's attributes (`attr`; dependencies as Targets
 * carrying the aspect's providers where it propagates), its class (`kind`), and the files of its
 * label attributes (`files`, `file`, `executable`), each made when first read.
 */
export class RuleView extends StarObject {
  private readonly values = new Map<string, Value>();
  private readonly deps = new Map<string, readonly ConfiguredTarget[]>();
  private readonly members = new Map<string, Value>();

  constructor(
    private readonly target: RuleAnalysisTarget,
    private readonly ruleClass: RuleClass,
    private readonly rc: RuleContext,
    private readonly dependencies: DependencyView,
  ) {
    super();
  }

  get type(): string {
    return 'rule_attributes';
  }

  /**
   * The dependencies of every attribute `propagates` accepts, analysed now: as in Bazel, the
   * aspect's applications below a target are done before its implementation runs (a Starlark
   * function cannot be re-entered while it runs).
   */
  prepare(propagates: (name: string) => boolean): void {
    for (const spec of this.ruleClass.attributes.values()) if (isDependencyAttribute(spec) && propagates(spec.name)) this.depsOf(spec);
  }

  private depsOf(spec: AttributeSpec): readonly ConfiguredTarget[] {
    let deps = this.deps.get(spec.name);
    if (!deps) {
      deps = this.dependencies(spec);
      this.deps.set(spec.name, deps);
    }
    return deps;
  }

  private attributeValue(name: string): Value | undefined {
    const known = this.values.get(name);
    if (known !== undefined) return known;
    const spec = this.ruleClass.attributes.get(name);
    if (!spec) return undefined;
    let v: Value;
    if (isDependencyAttribute(spec)) {
      const targets = this.depsOf(spec).map((t) => new TargetValue(t));
      if (spec.type === 'label') v = targets[0] ?? None;
      else if (spec.type === 'label_list') v = frozen(targets);
      else {
        const pairs = this.rc.attr<[string, string][]>(name, (spec.defaultValue as [string, string][]) ?? [], spec.configurable);
        const d = new StarDict();
        pairs.forEach(([, s], i) => targets[i] && d.set(targets[i]!, s));
        d.freeze();
        v = d;
      }
    } else {
      v = plainValue(spec, this.rc.attr<unknown>(name, spec.defaultValue, spec.configurable), this.rc);
    }
    this.values.set(name, v);
    return v;
  }

  /** `files`, `file` and `executable`: per label attribute, as a rule's own `ctx` has them. */
  private filesStruct(kind: 'files' | 'file' | 'executable'): StarStruct {
    const fields: [string, Value][] = [];
    for (const spec of this.ruleClass.attributes.values()) {
      if (!isDependencyAttribute(spec)) continue;
      const deps = this.depsOf(spec);
      if (kind === 'files') fields.push([spec.name, frozen(deps.flatMap((d) => d.files.map(fileValueOf)))]);
      else if (kind === 'file' && (spec.starlark?.singleFile ?? spec.type === 'label')) {
        const files = deps.flatMap((d) => d.files);
        fields.push([spec.name, files.length === 1 ? fileValueOf(files[0]!) : None]);
      } else if (kind === 'executable' && (spec.starlark?.executable ?? false)) {
        const program = deps[0] ? (executableOf(deps[0]) ?? (deps[0].files.length === 1 ? deps[0].files[0] : undefined)) : undefined;
        fields.push([spec.name, program ? fileValueOf(program) : None]);
      }
    }
    return new StarStruct(fields);
  }

  override attr(name: string): Value | undefined {
    const known = this.members.get(name);
    if (known) return known;
    let v: Value | undefined;
    switch (name) {
      case 'attr':
        v = new AttrsValue([...this.ruleClass.attributes.keys()].sort(), (n) => this.attributeValue(n));
        break;
      case 'kind':
        return this.target.ruleClass;
      case 'files':
      case 'file':
      case 'executable':
        v = this.filesStruct(name);
        break;
      default:
        return undefined;
    }
    this.members.set(name, v);
    return v;
  }

  override attrNames(): string[] {
    return ['attr', 'executable', 'file', 'files', 'kind'];
  }

  repr(): string {
    return `<rule context for ${this.target.label}>`;
  }
}
