import { formatPosition, KilnError, type Position } from '../core/index.js';
import { None, type Kwargs, type Value } from '../starlark/index.js';
import { Label, LabelSyntaxError, MAIN_REPO, validateTargetName, type PackageContext } from './label.js';
import { type AttributeSpec, type AttrValue, isLabelType } from './rules/attribute.js';
import { convertAttribute, ConversionError } from './rules/convert.js';
import { DEFAULT_CONDITION, Selector, SelectorList } from './select.js';
import { duplicateLabels } from './rules/duplicate-labels.js';
import type { RuleClass } from './rules/rule-class.js';
import { targetKind, type GeneratorInfo, type PackageGroupTarget, type RuleTarget, type SourceFileTarget, type Target } from './target.js';
import type { Workspace } from './workspace.js';

/** An error found while declaring a target; reported at the rule's BUILD-file position. */
export class LoadingError extends KilnError {}

/** Thrown through the interpreter to stop a BUILD file after an error that Bazel treats as fatal. */
export class PackageEvaluationStopped extends Error {}

/** What `package()` sets for every target of the package. */
export interface PackageDefaults {
  visibility: string[] | null;
  testonly: boolean;
  deprecation: string | null;
  features: string[];
  licenses: string[] | null;
}

/**
 * Collects one package's targets while its BUILD file runs, with Bazel's declaration-time checks.
 * Errors are recorded (the package is then "in error") and evaluation continues, as Bazel does,
 * so every broken rule of a file is reported at once.
 */
export class PackageBuilder {
  readonly targets = new Map<string, Target>();
  readonly errors: LoadingError[] = [];
  readonly defaults: PackageDefaults = { visibility: null, testonly: false, deprecation: null, features: [], licenses: null };
  readonly context: PackageContext;
  packageCalled = false;
  /** Source files referenced by label attributes, added once the file has run. */
  private readonly referencedSources = new Map<string, Position>();

  constructor(
    readonly workspace: Workspace,
    readonly repo: string,
    readonly pkg: string,
    /** Workspace-relative path of the BUILD file, as positions print it. */
    readonly buildFilePath: string,
  ) {
    this.context = { repo, pkg };
  }

  labelOf(name: string): Label {
    return Label.inPackage(this.context, name);
  }

  error(message: string, pos: Position): void {
    this.errors.push(new LoadingError(message, pos));
  }

  /** Declares a rule from a native or Starlark rule function call. */
  addRule(ruleClass: RuleClass, kwargs: Kwargs | null, pos: Position, generator?: GeneratorInfo): void {
    let nameValue: Value | undefined;
    for (const [k, v] of kwargs ?? []) if (k === 'name') nameValue = v;
    if (nameValue === undefined || nameValue === None) {
      this.error(`missing value for mandatory attribute 'name' in '${ruleClass.name}' rule`, pos);
      return;
    }
    if (typeof nameValue !== 'string') {
      this.error(
        `expected value of type 'string' for attribute 'name' in '${ruleClass.name}' rule, but got ${String(nameValue)} (${typeof nameValue === 'object' ? nameValue.type : typeof nameValue})`,
        pos,
      );
      return;
    }
    const nameErr = validateTargetName(nameValue);
    if (nameErr) {
      this.error(`illegal rule name: ${nameValue}: invalid target name '${nameValue}': ${nameErr}`, pos);
      return;
    }
    const label = this.labelOf(nameValue);
    const attrs = new Map<string, AttrValue>();
    const outputs: string[] = [];
    let ok = true;
    const fail = (message: string) => {
      this.error(`${label}: ${message}`, pos);
      ok = false;
    };
    for (const [k, v] of kwargs ?? []) {
      const spec = ruleClass.attributes.get(k);
      if (!spec) {
        fail(`no such attribute '${k}' in '${ruleClass.name}' rule`);
        continue;
      }
      if (v === None) continue; // None means "use the default", as in Bazel.
      try {
        const converted = convertAttribute(spec, v, this.context, ruleClass.name);
        attrs.set(k, converted);
        if (spec.type === 'label_list') {
          for (const duplicate of duplicateLabels(converted)) {
            // Bazel's wording, without the usual `//pkg:name: ` prefix.
            this.error(`Label '${duplicate}' is duplicated in the '${k}' attribute of rule '${nameValue}'`, pos);
            ok = false;
          }
        }
      } catch (e) {
        if (!(e instanceof ConversionError)) throw e;
        fail(e.message);
      }
    }
    const shape = shapeOf(ruleClass);
    for (const spec of shape.mandatory) {
      if (!attrs.has(spec.name)) fail(`missing value for mandatory attribute '${spec.name}' in '${ruleClass.name}' rule`);
    }
    if (!ok) return;

    for (const spec of shape.outputs) {
      const v = attrs.get(spec.name);
      const outs = typeof v === 'string' ? [v] : Array.isArray(v) ? (v as string[]) : [];
      const canonical: string[] = [];
      for (const raw of outs) {
        const out = this.outputName(raw, spec.name, ruleClass.name, fail);
        if (out !== undefined) {
          outputs.push(out);
          canonical.push(this.labelOf(out).toString());
        }
      }
      // Stored as labels, as Bazel prints them (`outs = ["//pkg:a.out"]`).
      if (v !== undefined) attrs.set(spec.name, typeof v === 'string' ? (canonical[0] ?? v) : canonical);
    }
    for (const [, template] of ruleClass.implicitOutputs ?? ruleClass.starlark?.implicitOutputs ?? []) {
      const out = implicitOutputName(template, nameValue, attrs);
      if (out === undefined) fail(`implicit output template '${template}' names an attribute that is not a string or label`);
      else if (this.outputName(out, 'outputs', ruleClass.name, fail) !== undefined) outputs.push(out);
    }
    if (!ok) return;

    // Optional fields are set only when present (no spreads: a BUILD file declares thousands of rules).
    const rule: { -readonly [K in keyof RuleTarget]: RuleTarget[K] } = {
      kind: 'rule',
      name: nameValue,
      ruleClass: ruleClass.name,
      location: pos,
      attrs,
      outputs,
      dependencies: [],
    };
    if (generator) rule.generator = generator;
    if (ruleClass.starlarkDefined) rule.starlarkDefined = true;
    if (ruleClass.starlark) rule.ruleDefinition = ruleClass.starlark.key;
    for (const check of ruleClass.checks) {
      check(rule, (attribute, message) => {
        // Bazel's attributeError / ruleError prefixes.
        this.error(
          attribute ? `in ${attribute} attribute of ${ruleClass.name} rule ${label}: ${message}` : `in ${ruleClass.name} rule ${label}: ${message}`,
          pos,
        );
        ok = false;
      });
    }
    if (!ok) return;
    if (!this.register(rule)) return;
    for (const out of outputs) this.register({ kind: 'generated', name: out, location: pos, generatingRule: nameValue });
    this.noteReferencedSources(ruleClass, rule, pos);
  }

  /** An output attribute entry: a name in this package, not crossing into a subpackage. */
  private outputName(raw: string, attribute: string, ruleClass: string, fail: (m: string) => void): string | undefined {
    let label: Label;
    try {
      label = Label.parse(raw, this.context);
    } catch (e) {
      fail(`invalid label '${raw}' in attribute '${attribute}' in '${ruleClass}' rule: ${(e as Error).message}`);
      return undefined;
    }
    if (label.repo !== this.repo || label.pkg !== this.pkg) {
      fail(`label '${raw}' in attribute '${attribute}' in '${ruleClass}' rule is not in the current package '${this.pkg}'`);
      return undefined;
    }
    const crossing = this.workspace.subpackageCrossing(label);
    if (crossing) {
      fail(`output file '${label.name}' of attribute '${attribute}' crosses a package boundary: ${crossing}`);
      return undefined;
    }
    return label.name;
  }

  /** Adds a target; a name clash is reported in Bazel's Package.Builder wording. */
  register(target: Target): boolean {
    const existing = this.targets.get(target.name);
    if (existing) {
      let subject = `${targetKind(target)} '${target.name}'`;
      if (target.kind === 'generated') subject += ` in rule '${target.generatingRule}'`;
      const object = existing.kind === 'generated' ? `generated file from rule '${existing.generatingRule}'` : targetKind(existing);
      this.error(`${subject} conflicts with existing ${object}, defined at ${formatPosition(existing.location)}`, target.location);
      // Bazel stops evaluating the BUILD file at a name conflict.
      throw new PackageEvaluationStopped();
    }
    this.targets.set(target.name, target);
    return true;
  }

  /** Labels of this package named by a rule are source files unless something else declares them. */
  /** Also fills `rule.dependencies`: every label the rule names (select keys and visibility groups included). */
  private noteReferencedSources(ruleClass: RuleClass, rule: RuleTarget, pos: Position): void {
    const attrs = rule.attrs;
    const prefix = this.repo === '' ? `//${this.pkg}:` : `@${this.repo}//${this.pkg}:`;
    const deps = new Set<string>();
    const note = (l: string, asSource = true) => {
      deps.add(l);
      if (!asSource || !l.startsWith(prefix)) return;
      const name = l.slice(prefix.length);
      if (!this.referencedSources.has(name)) this.referencedSources.set(name, pos);
    };
    const visit = (type: string, v: unknown) => {
      if (typeof v === 'string') note(v);
      else if (Array.isArray(v)) {
        for (const e of v) {
          if (typeof e === 'string') note(e);
          else if (Array.isArray(e)) {
            if (type === 'label_keyed_string_dict') note(e[0] as string);
            else if (Array.isArray(e[1])) for (const x of e[1]) note(x as string);
          }
        }
      }
    };
    // A Starlark rule's label defaults (implicit dependencies such as `_tool`) are dependencies too.
    const defaults = ruleClass.starlarkDefined ? labelDefaultsOf(ruleClass).filter(([name]) => !attrs.has(name)) : [];
    for (const [name, v] of [...attrs, ...defaults]) {
      const spec = ruleClass.attributes.get(name)!;
      if (!isLabelType(spec.type)) continue;
      if (name === 'visibility') {
        // Package groups named by visibility are dependencies; //visibility:public and :private are not targets.
        for (const l of v as string[]) if (!l.startsWith('//visibility:')) note(l, false);
        continue;
      }
      if (v instanceof SelectorList) {
        for (const part of v.parts) {
          if (!(part instanceof Selector)) visit(spec.type, part);
          else {
            for (const [key, x] of part.entries) {
              if (key !== DEFAULT_CONDITION) note(key, false);
              visit(spec.type, x);
            }
          }
        }
      } else visit(spec.type, v);
    }
    for (const dep of deps) rule.dependencies.push(dep);
  }

  exportFile(name: string, pos: Position, visibility: string[] | undefined): void {
    const existing = this.targets.get(name);
    if (existing) {
      if (existing.kind === 'source') {
        if (visibility) existing.visibility = visibility;
        return;
      }
      this.error(`source file '${name}' conflicts with existing ${targetKind(existing)}, defined at ${formatPosition(existing.location)}`, pos);
      return;
    }
    const t: SourceFileTarget = { kind: 'source', name, location: pos, ...(visibility ? { visibility } : {}) };
    this.targets.set(name, t);
  }

  addPackageGroup(group: PackageGroupTarget): void {
    this.register(group);
  }

  /** Finishes the package: the BUILD file and referenced files become source-file targets. */
  finish(): void {
    const buildName = this.buildFilePath.slice(this.buildFilePath.lastIndexOf('/') + 1);
    // Bazel 2.1 locates the BUILD file at line 1 without a column.
    if (!this.targets.has(buildName)) this.targets.set(buildName, { kind: 'source', name: buildName, location: { file: this.buildFilePath, line: 1, col: 0 } });
    for (const [name, pos] of this.referencedSources) {
      if (this.targets.has(name)) continue;
      // A referenced name inside a subpackage belongs to that package, not to this one.
      if (name.includes('/') && this.workspace.subpackageCrossing(this.labelOf(name))) continue;
      this.targets.set(name, { kind: 'source', name, location: pos });
    }
  }
}

/**
 * The file name of an implicit output (`outputs = {"out": "%{name}.txt"}`): `%{name}` and
 * `%{attr}` become the target's name and the attribute's value (a label's name). Undefined when a
 * placeholder names something other than a string or label.
 */
export function implicitOutputName(template: string, name: string, attrs: ReadonlyMap<string, AttrValue>): string | undefined {
  let ok = true;
  const out = template.replace(/%\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, attribute: string) => {
    if (attribute === 'name') return name;
    const v = attrs.get(attribute);
    if (typeof v !== 'string') {
      ok = false;
      return '';
    }
    return labelNameOrText(v);
  });
  return ok ? out : undefined;
}

/** Only the name is read: every package resolves a relative label to the same name. */
const ANY_PACKAGE: PackageContext = { repo: MAIN_REPO, pkg: '' };

/** A label's name (`//a:b.txt` → `b.txt`); any other text (a string attribute's value) as it is. */
function labelNameOrText(value: string): string {
  try {
    return Label.parse(value, ANY_PACKAGE).name;
  } catch (e) {
    if (e instanceof LabelSyntaxError) return value;
    throw e;
  }
}

const labelDefaults = new WeakMap<RuleClass, (readonly [string, AttrValue])[]>();

/** A rule class's label attributes that have a default, computed once per class. */
function labelDefaultsOf(ruleClass: RuleClass): readonly (readonly [string, AttrValue])[] {
  let found = labelDefaults.get(ruleClass);
  if (!found) {
    found = [...ruleClass.attributes.values()]
      .filter((spec) => isLabelType(spec.type) && spec.defaultValue !== null && !(Array.isArray(spec.defaultValue) && spec.defaultValue.length === 0))
      .map((spec) => [spec.name, spec.defaultValue] as const);
    labelDefaults.set(ruleClass, found);
  }
  return found;
}

/** What addRule checks of a rule class, listed once per class: its mandatory and its output attributes. */
interface RuleClassShape {
  readonly mandatory: readonly AttributeSpec[];
  readonly outputs: readonly AttributeSpec[];
}

const shapes = new WeakMap<RuleClass, RuleClassShape>();

function shapeOf(ruleClass: RuleClass): RuleClassShape {
  let shape = shapes.get(ruleClass);
  if (shape === undefined) {
    const specs = [...ruleClass.attributes.values()];
    shape = { mandatory: specs.filter((a) => a.mandatory), outputs: specs.filter((a) => a.type === 'output' || a.type === 'output_list') };
    shapes.set(ruleClass, shape);
  }
  return shape;
}
