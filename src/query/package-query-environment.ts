import { relative, sep } from 'node:path';
import {
  BUILD_SETTING_RULE_CLASSES,
  Selector,
  SelectorList,
  Label,
  LabelSyntaxError,
  NATIVE_RULE_CLASSES,
  NoSuchPackageError,
  packageId,
  targetKind,
  type AttrValue,
  type PlainAttrValue,
  type RuleClass,
  type RuleTarget,
} from '../loading/index.js';
import { dependencyClosure } from './graph-walk.js';
import type { AttributeView, QueryEnvironment } from './query-environment.js';
import { compareLabels, QueryEvaluationError, type QueryTarget, type TargetLoader } from './target-loader.js';
import { resolveTargetPattern } from './target-pattern-resolver.js';
import { parseTargetPattern } from './target-pattern.js';
import { visibilityGrants } from './target-visibility.js';

export interface PackageQueryOptions {
  /** The working directory's path inside the workspace, for relative patterns. */
  readonly offset?: string;
  /** Leave out dependencies the rule did not name (attribute defaults): Bazel's --noimplicit_deps. */
  readonly noImplicitDeps?: boolean;
  /** Leave out dependencies only tool attributes give (genrule's tools and exec_tools): --notool_deps. */
  readonly noToolDeps?: boolean;
  /** Patterns whose transitive closure is the universe of allrdeps and rbuildfiles (default `//...`). */
  readonly universeScope?: readonly string[];
  /** Set by genquery: a wildcard pattern in the expression is an error. */
  readonly forbidWildcards?: string;
}

/** Attributes built for the exec configuration: the tool dependencies --notool_deps leaves out. */
const TOOL_ATTRIBUTES: readonly string[] = ['tools', 'exec_tools'];
/** Label attributes that are no dependency edge in Bazel's graph (nodep labels). */
const NODEP_ATTRIBUTES: readonly string[] = ['default_constraint_value'];

/** More select() combinations than this are matched branch by branch instead of as whole values. */
const MAX_COMBINATIONS = 64;

/** The query environment over loaded packages: targets are QueryTargets, loaded on demand. */
export class PackageQueryEnvironment implements QueryEnvironment<QueryTarget> {
  /** By QueryTarget: the loader makes one per label. */
  private readonly depsCache = new Map<QueryTarget, QueryTarget[]>();
  /** Attributes whose labels are no edge (nodep, and tools under --notool_deps). */
  private readonly leftOut: readonly string[];
  /**
   * The edges evaluation has seen, as Bazel's query graph knows them: every edge a function
   * followed, and the edges among the targets of one wildcard pattern. Output orders and draws the
   * result with these (through targets left out of the result), so a union of single targets has none.
   */
  private readonly knownEdges = new Map<QueryTarget, readonly QueryTarget[] | Set<QueryTarget>>();
  private universeCache: QueryTarget[] | undefined;

  constructor(
    readonly targets: TargetLoader,
    private readonly options: PackageQueryOptions = {},
  ) {
    this.leftOut = [...NODEP_ATTRIBUTES, ...(options.noToolDeps ? TOOL_ATTRIBUTES : [])];
  }

  keyOf(t: QueryTarget): string {
    return t.label.toString();
  }

  labelOf(t: QueryTarget): string {
    return t.label.toString();
  }

  packageOf(t: QueryTarget): string {
    return packageId(t.pkg.repo, t.pkg.pkg);
  }

  compare(a: QueryTarget, b: QueryTarget): number {
    return compareLabels(a.label, b.label);
  }

  resolvePattern(text: string, column: number): QueryTarget[] {
    const pattern = parseTargetPattern(text, this.options.offset ?? '');
    if (this.options.forbidWildcards !== undefined && pattern.kind !== 'single') {
      throw new QueryEvaluationError(`${this.options.forbidWildcards}: wildcard pattern '${text}' (column ${column}) is not allowed; name the targets`);
    }
    const targets = resolveTargetPattern(pattern, this.targets);
    if (pattern.kind !== 'single') {
      // Bazel 2.1 links a wildcard's targets by their attribute edges; package groups named by
      // visibility become edges only when a function follows dependencies.
      const matched = new Set(targets);
      for (const t of targets) {
        const visibility = t.target.kind === 'rule' ? t.target.attrs.get('visibility') : undefined;
        const groups = Array.isArray(visibility) && visibility.length > 0 ? new Set(visibility as string[]) : undefined;
        for (const d of this.directDependencies(t)) if (matched.has(d) && !groups?.has(this.keyOf(d))) this.noteEdge(t, d);
      }
    }
    return targets;
  }

  dependencies(t: QueryTarget): QueryTarget[] {
    const deps = this.directDependencies(t);
    this.noteEdges(t, deps);
    return deps;
  }

  /**
   * The result's graph for output: for each target of `result`, the targets of `result` it reaches
   * through known edges without passing another target of the result (Bazel's extractSubgraph).
   */
  resultSuccessors(result: readonly QueryTarget[]): (t: QueryTarget) => readonly QueryTarget[] {
    const inResult = new Set(result);
    const memo = new Map<QueryTarget, QueryTarget[]>();
    return (t) => {
      let out = memo.get(t);
      if (out) return out;
      // Usually every known edge ends in the result: then those edges are the answer (in the order
      // the search below would find them).
      const direct = this.knownEdges.get(t) ?? new Set<QueryTarget>();
      let allInResult = true;
      for (const d of direct) if (d === t || !inResult.has(d)) allInResult = false;
      if (allInResult) {
        out = [...direct].reverse();
        memo.set(t, out);
        return out;
      }
      const found = new Set<QueryTarget>();
      const seen = new Set<QueryTarget>([t]);
      const pending = [...(this.knownEdges.get(t) ?? [])];
      while (pending.length > 0) {
        const d = pending.pop()!;
        if (seen.has(d)) continue;
        seen.add(d);
        if (inResult.has(d)) found.add(d);
        else for (const e of this.knownEdges.get(d) ?? []) pending.push(e);
      }
      out = [...found];
      memo.set(t, out);
      return out;
    };
  }

  /**
   * Notes every edge of `from` to its direct dependencies. Most targets' edges are only ever these, so
   * the (distinct) list itself is kept; a Set is made only when other edges join it.
   */
  private noteEdges(from: QueryTarget, deps: readonly QueryTarget[]): void {
    const known = this.knownEdges.get(from);
    if (known === undefined) this.knownEdges.set(from, deps);
    else if (known !== deps) {
      const set = known instanceof Set ? known : new Set(known);
      for (const d of deps) set.add(d);
      this.knownEdges.set(from, set);
    }
  }

  private noteEdge(from: QueryTarget, to: QueryTarget): void {
    const known = this.knownEdges.get(from);
    if (known === undefined) this.knownEdges.set(from, new Set([to]));
    else if (known instanceof Set) known.add(to);
    else if (!known.includes(to)) this.knownEdges.set(from, new Set(known).add(to));
  }

  private directDependencies(t: QueryTarget): QueryTarget[] {
    let deps = this.depsCache.get(t);
    if (deps) return deps;
    deps = [];
    const target = t.target;
    switch (target.kind) {
      case 'rule':
        this.addTargets(deps, this.ruleDependencies(target), t);
        if (!this.options.noImplicitDeps) {
          const cls = ruleClassOf(target);
          if (cls) for (const [name, labels] of labelDefaultsOf(cls)) if (!target.attrs.has(name)) this.addTargets(deps, labels, t);
        }
        break;
      case 'generated':
        this.addTargets(deps, [t.label.sibling(target.generatingRule).toString()], t);
        break;
      case 'package_group':
        this.addTargets(deps, target.includes, t);
        break;
    }
    // A test_suite without `tests` depends on the tests it stands for (Bazel's $implicit_tests).
    if (this.isTestSuite(t) && !this.options.noImplicitDeps && this.attributeTargets(t, 'tests').length === 0)
      for (const test of this.implicitTests(t)) deps.push(test);
    // One edge per dependency however many attributes name it (an implicit default may repeat one).
    if (hasRepeats(deps)) deps = [...new Set(deps)];
    this.depsCache.set(t, deps);
    return deps;
  }

  /** Appends the targets `labels` name (those that exist; a missing one is reported). */
  private addTargets(deps: QueryTarget[], labels: readonly string[], from: QueryTarget): void {
    for (const l of labels) {
      const d = this.targetOf(l, from);
      if (d) deps.push(d);
    }
  }

  universe(): QueryTarget[] {
    if (!this.universeCache) {
      const roots: QueryTarget[] = [];
      for (const p of this.options.universeScope ?? ['//...:*']) for (const root of this.resolvePattern(p, 0)) roots.push(root);
      this.universeCache = [...dependencyClosure(this, roots).values()];
    }
    return this.universeCache;
  }

  kindOf(t: QueryTarget): string {
    return targetKind(t.target);
  }

  isRule(t: QueryTarget): boolean {
    return t.target.kind === 'rule';
  }

  isTestRule(t: QueryTarget): boolean {
    return t.target.kind === 'rule' && (ruleClassOf(t.target)?.isTest ?? t.target.ruleClass.endsWith('_test'));
  }

  isTestSuite(t: QueryTarget): boolean {
    return t.target.kind === 'rule' && t.target.ruleClass === 'test_suite';
  }

  attribute(t: QueryTarget, name: string): AttributeView | undefined {
    if (t.target.kind !== 'rule') return undefined;
    const spec = ruleClassOf(t.target)?.attributes.get(name);
    const given = t.target.attrs.get(name);
    if (given !== undefined) return { type: spec?.type ?? 'unknown', values: possibleValues(given), explicit: true };
    if (!spec) return undefined;
    return { type: spec.type, values: [spec.defaultValue], explicit: false };
  }

  attributeTargets(t: QueryTarget, name: string): QueryTarget[] {
    if (t.target.kind !== 'rule') return [];
    const a = this.attribute(t, name);
    if (!a) return [];
    // A string is a label here when loading recorded it as one (a dependency or an output).
    const rule = t.target;
    const known = new Set([...rule.dependencies, ...this.defaultLabels(rule), ...rule.outputs.map((o) => t.label.sibling(o).toString())]);
    const out = new Map<string, QueryTarget>();
    for (const v of a.values) {
      for (const s of strings(v)) {
        if (!known.has(s) || out.has(s)) continue;
        const d = this.targetOf(s, t);
        if (d) out.set(s, d);
      }
    }
    return [...out.values()];
  }

  implicitTests(suite: QueryTarget): QueryTarget[] {
    return this.siblings(suite).filter((t) => this.isTestRule(t) && !hasTag(t, 'manual'));
  }

  siblings(t: QueryTarget): QueryTarget[] {
    return [...t.pkg.targets.values()].map((x) => this.targets.wrap(t.pkg, x));
  }

  buildFile(t: QueryTarget): QueryTarget | undefined {
    const name = t.pkg.buildFile.slice(t.pkg.buildFile.lastIndexOf('/') + 1);
    const b = t.pkg.targets.get(name);
    return b ? this.targets.wrap(t.pkg, b) : undefined;
  }

  loadedFiles(t: QueryTarget): QueryTarget[] {
    const loader = this.targets.loader;
    const out: QueryTarget[] = [];
    let files: string[];
    try {
      files = loader.filesReadBy(t.pkg.repo, t.pkg.pkg);
    } catch (e) {
      if (e instanceof NoSuchPackageError) return out;
      throw e;
    }
    for (const file of files) {
      const label = this.labelOfFile(file);
      if (!label || (label.pkg === t.pkg.pkg && label.repo === t.pkg.repo && label.name === t.pkg.buildFile.slice(t.pkg.buildFile.lastIndexOf('/') + 1)))
        continue;
      const pkg = this.targets.loadPackage(label.repo, label.pkg);
      if (!pkg) continue;
      // A .bzl file need not be a target of its package; query shows it as a source file all the same.
      out.push(this.targets.wrap(pkg, pkg.targets.get(label.name) ?? { kind: 'source', name: label.name, location: { file: pkg.buildFile, line: 1, col: 0 } }));
    }
    return out;
  }

  /** Labels of the .bzl files t's package loads, transitively (for output; no scope applies). */
  loadsOf(t: QueryTarget): string[] {
    return this.loadedFiles(t).map((f) => f.label.toString());
  }

  isVisible(target: QueryTarget, from: QueryTarget): boolean {
    if (this.packageOf(target) === this.packageOf(from)) return true;
    const visibility = this.visibilityOf(target);
    return visibilityGrants(visibility, this.packageOf(from), (label) => {
      const g = this.peek(label);
      return g?.target.kind === 'package_group' ? g.target : undefined;
    });
  }

  fail(message: string): void {
    this.targets.fail(message);
  }

  warn(message: string): void {
    this.targets.report(message);
  }

  /**
   * The labels a rule depends on: those it names, less visibility's package specs, labels only
   * no-dependency attributes name (constraint_setting's default_constraint_value, as in Bazel), and
   * under --notool_deps labels only tool attributes name.
   */
  private ruleDependencies(rule: RuleTarget): readonly string[] {
    const all = rule.dependencies;
    let deps = all.some(isPackageSpec) ? all.filter((d) => !isPackageSpec(d)) : all;
    if (this.options.noImplicitDeps && rule.starlarkDefined) {
      const implicit = this.starlarkImplicitLabels(rule);
      if (implicit.size > 0) deps = deps.filter((d) => !implicit.has(d));
    }
    const left = this.leftOut;
    if (!left.some((a) => rule.attrs.has(a))) return deps;
    const elsewhere = new Set<string>();
    for (const [name, v] of rule.attrs) if (!left.includes(name)) for (const p of possibleValues(v)) for (const x of strings(p)) elsewhere.add(x);
    return deps.filter((d) => elsewhere.has(d));
  }

  /**
   * The labels only the defaults of attributes a Starlark rule did not set name (`_tool` and any
   * other label attribute left to its default): loading counts them among the rule's dependencies.
   * Bazel's --noimplicit_deps keeps an attribute's labels only when the BUILD file set it
   * (DependencyFilter.NO_IMPLICIT_DEPS: isAttributeValueExplicitlySpecified), private or not.
   */
  private starlarkImplicitLabels(rule: RuleTarget): ReadonlySet<string> {
    const cls = rule.ruleDefinition === undefined ? undefined : this.targets.loader.starlarkRule(rule.ruleDefinition)?.ruleClass;
    const implicit = new Set<string>();
    if (!cls) return implicit;
    for (const [name, labels] of labelDefaultsOf(cls)) if (!rule.attrs.has(name)) for (const l of labels) implicit.add(l);
    if (implicit.size === 0) return implicit;
    // A label an attribute the rule set names as well stays an (explicit) dependency.
    for (const [name, v] of rule.attrs) if (cls.attributes.get(name)?.type.startsWith('label')) for (const l of labelsNamed(v)) implicit.delete(l);
    return implicit;
  }

  /** Label defaults of attributes the rule did not set (implicit dependencies). */
  private defaultLabels(rule: RuleTarget): string[] {
    const cls = ruleClassOf(rule);
    if (!cls) return [];
    const out: string[] = [];
    for (const [name, labels] of labelDefaultsOf(cls)) if (!rule.attrs.has(name)) for (const s of labels) out.push(s);
    return out;
  }

  private visibilityOf(t: QueryTarget): readonly string[] {
    const target = t.target;
    switch (target.kind) {
      case 'rule': {
        const v = target.attrs.get('visibility');
        return Array.isArray(v) ? (v as string[]) : (t.pkg.defaults.visibility ?? ['//visibility:private']);
      }
      case 'generated': {
        const rule = t.pkg.targets.get(target.generatingRule);
        return rule ? this.visibilityOf(this.targets.wrap(t.pkg, rule)) : ['//visibility:private'];
      }
      case 'source':
        // Bazel 2.1's visible(): a source file has the visibility exports_files gave it, else the package default.
        return target.visibility ?? t.pkg.defaults.visibility ?? ['//visibility:private'];
      case 'package_group':
        return ['//visibility:public'];
    }
  }

  private targetOf(label: string, from: QueryTarget): QueryTarget | undefined {
    let l: Label;
    try {
      l = Label.parse(label);
    } catch (e) {
      if (e instanceof LabelSyntaxError) {
        this.fail(`invalid label '${label}' referenced by '${from.label}': ${e.message}`);
        return undefined;
      }
      throw e;
    }
    return this.targets.getTarget(l, from.label.toString());
  }

  private peek(label: string): QueryTarget | undefined {
    try {
      return this.targets.peekTarget(Label.parse(label));
    } catch (e) {
      if (e instanceof LabelSyntaxError) return undefined;
      throw e;
    }
  }

  /** The label of a file the loader read, when it lies in a package of a known repository. */
  private labelOfFile(file: string): Label | undefined {
    const loader = this.targets.loader;
    const main = relative(loader.workspace.root, file);
    let repo = '';
    let path = main;
    if (main.startsWith('..') || main === '') {
      const external = relative(`${loader.outputBase}${sep}external`, file);
      if (external.startsWith('..')) return undefined;
      const parts = external.split(sep);
      repo = parts[0]!;
      path = parts.slice(1).join('/');
    }
    path = path.split(sep).join('/');
    const pkg = loader.repository(repo).containingPackage(path);
    if (pkg === undefined) return undefined;
    return Label.inPackage({ repo, pkg }, pkg === '' ? path : path.slice(pkg.length + 1));
  }
}

const labelDefaults = new Map<RuleClass, (readonly [string, readonly string[]])[]>();

/** A rule class's label-typed attributes (visibility aside) with the labels their defaults name. */
function labelDefaultsOf(cls: RuleClass): readonly (readonly [string, readonly string[]])[] {
  let list = labelDefaults.get(cls);
  if (list === undefined) {
    list = [];
    for (const spec of cls.attributes.values()) {
      if (spec.name === 'visibility' || !spec.type.startsWith('label')) continue;
      const labels = strings(spec.defaultValue);
      if (labels.length > 0) list.push([spec.name, labels]);
    }
    labelDefaults.set(cls, list);
  }
  return list;
}

/** A visibility package spec (`//p:__pkg__`, `//p:__subpackages__`): no target, no edge. */
function isPackageSpec(label: string): boolean {
  return label.endsWith(':__pkg__') || label.endsWith(':__subpackages__');
}

function ruleClassOf(rule: RuleTarget): RuleClass | undefined {
  return NATIVE_RULE_CLASSES.get(rule.ruleClass) ?? BUILD_SETTING_RULE_CLASSES.get(rule.ruleClass);
}

function hasTag(t: QueryTarget, tag: string): boolean {
  if (t.target.kind !== 'rule') return false;
  const tags = t.target.attrs.get('tags');
  return Array.isArray(tags) && tags.includes(tag);
}

/** Every string inside a plain value (list items, dict keys and values). */
function strings(v: PlainAttrValue): string[] {
  if (typeof v === 'string') return [v];
  if (!Array.isArray(v)) return [];
  const out: string[] = [];
  for (const e of v as readonly unknown[]) {
    if (typeof e === 'string') out.push(e);
    else if (Array.isArray(e)) {
      out.push(e[0] as string);
      if (typeof e[1] === 'string') out.push(e[1]);
      else if (Array.isArray(e[1])) for (const item of e[1] as string[]) out.push(item);
    }
  }
  return out;
}

/** Every string an attribute value names, select() conditions included. */
function labelsNamed(v: AttrValue): string[] {
  if (!(v instanceof SelectorList)) return strings(v);
  return v.parts.flatMap((part) => (part instanceof Selector ? part.entries.flatMap(([key, x]) => [key, ...strings(x)]) : strings(part)));
}

/** The values a configurable attribute may take: one per combination of select branches. */
function possibleValues(v: AttrValue): PlainAttrValue[] {
  if (!(v instanceof SelectorList)) return [v];
  let combos: PlainAttrValue[][] = [[]];
  for (const choices of v.alternatives()) {
    if (combos.length * choices.length > MAX_COMBINATIONS) {
      // Too many to concatenate: each branch on its own still lets attr() and labels() see every value.
      return v.values();
    }
    combos = combos.flatMap((c) => choices.map((x) => [...c, x]));
  }
  return combos.map(concat);
}

function concat(parts: PlainAttrValue[]): PlainAttrValue {
  if (parts.length === 1) return parts[0]!;
  if (parts.every((p) => typeof p === 'string')) return parts.join('');
  if (parts.every((p) => typeof p === 'number')) return (parts as number[]).reduce((a, b) => a + b, 0);
  return parts.flatMap((p) => (Array.isArray(p) ? (p as PlainAttrValue[]) : [])) as PlainAttrValue;
}

/** Whether `list` holds an item twice (a scan for the short lists of direct dependencies). */
function hasRepeats<T>(list: readonly T[]): boolean {
  if (list.length > 16) return new Set(list).size !== list.length;
  for (let i = 1; i < list.length; i++) if (list.lastIndexOf(list[i]!, i - 1) >= 0) return true;
  return false;
}
