import type { Analyzer, AnalyzerOptions, BuildConfiguration, ConfiguredTarget } from '../analysis/index.js';
import { Selector, SelectorList, type AttrValue, type RuleTarget } from '../loading/index.js';
import type { QueryTarget } from '../query/index.js';

type ConfiguredTargetMemo = NonNullable<AnalyzerOptions['memo']>;
type AnalyzerHooks = Parameters<ConfiguredTargetMemo['attach']>[0];

/** One dependency edge of the configured graph, with the attribute that made it when the BUILD file wrote it. */
export interface ConfiguredEdge {
  readonly to: ConfiguredNode;
  /** The attribute whose value names the dependency; `$config_dependencies` for a select() condition; absent when only a default names it. */
  readonly attribute?: string;
  /** Only an attribute's default names it (Bazel's implicit dependency). */
  readonly implicit: boolean;
}

/**
 * A configured target as cquery and aquery see it: a label in one configuration. Source files
 * have none (Bazel's null configuration): one node however many configurations read them.
 */
export interface ConfiguredNode {
  /** `//pkg:x (<configuration id>)`, `//pkg:x.txt (null)`: unique in the graph. */
  readonly key: string;
  readonly label: string;
  readonly configured: ConfiguredTarget;
  /** Undefined for source files. */
  readonly config: BuildConfiguration | undefined;
  readonly loaded: QueryTarget;
  readonly deps: ConfiguredEdge[];
}

/** The id cquery prints after a label: the configuration's first seven characters, `null` for source files. */
export function shortConfigurationId(node: ConfiguredNode): string {
  return node.config ? node.config.id.slice(0, 7) : 'null';
}

function rawKey(label: string, configId: string): string {
  return `${label}\0${configId}`;
}

/**
 * A memo for the analyzer that computes every configured target itself (nothing is reused from the
 * output base, so every edge is seen) and records which configured target asked for which while it
 * was being analysed: the configured graph's edges, including those to config_settings and tools.
 */
export class EdgeRecordingMemo implements ConfiguredTargetMemo {
  private hooks: AnalyzerHooks | undefined;
  private readonly stack: string[] = [];
  readonly edges = new Map<string, Set<string>>();
  readonly targets = new Map<string, ConfiguredTarget>();

  attach(hooks: AnalyzerHooks): void {
    this.hooks = hooks;
  }

  configured(label: string, config: BuildConfiguration): ConfiguredTarget {
    const key = rawKey(label, config.id);
    const parent = this.stack.at(-1);
    if (parent !== undefined) {
      let out = this.edges.get(parent);
      if (!out) this.edges.set(parent, (out = new Set()));
      out.add(key);
    }
    const known = this.targets.get(key);
    if (known) return known;
    this.stack.push(key);
    try {
      const ct = this.hooks!.compute(label, config);
      this.targets.set(key, ct);
      return ct;
    } finally {
      this.stack.pop();
    }
  }

  readVolatile(): void {}
}

/** Every label string in an attribute value, each select() branch included, with the conditions apart. */
function labelStrings(v: AttrValue, values: Set<string>, conditions: Set<string>): void {
  const plain = (x: unknown): void => {
    if (typeof x === 'string') values.add(x);
    else if (Array.isArray(x)) for (const e of x) plain(e);
  };
  if (!(v instanceof SelectorList)) return plain(v);
  for (const part of v.parts) {
    if (part instanceof Selector) {
      for (const [condition, value] of part.entries) {
        conditions.add(condition);
        plain(value);
      }
    } else plain(part);
  }
}

/** For one rule: the attribute that names each label it wrote, and its select() conditions. */
function explicitAttributes(rule: RuleTarget): { byLabel: Map<string, string>; conditions: Set<string> } {
  const byLabel = new Map<string, string>();
  const conditions = new Set<string>();
  for (const [name, value] of rule.attrs) {
    if (name === 'visibility' || name === 'name') continue;
    const values = new Set<string>();
    labelStrings(value, values, conditions);
    for (const l of values) if (!byLabel.has(l)) byLabel.set(l, name);
  }
  return { byLabel, conditions };
}

/**
 * The configured graph the analyzer built while analysing the universe: one node per (label,
 * configuration), source files in the null configuration, edges as the analyzer followed them.
 */
export class ConfiguredGraph {
  readonly nodes = new Map<string, ConfiguredNode>();
  private readonly byLabel = new Map<string, ConfiguredNode[]>();

  private readonly nodeOfRaw = new Map<string, ConfiguredNode>();
  private readonly edgesDone = new Set<string>();

  constructor(
    private readonly memo: EdgeRecordingMemo,
    private readonly loadedTarget: (label: string) => QueryTarget | undefined,
  ) {
    this.refresh();
  }

  /** Takes in what the memo recorded since: configured targets analysed on demand (cquery's config()). */
  refresh(): void {
    const { nodeOfRaw } = this;
    for (const [raw, ct] of this.memo.targets) {
      if (nodeOfRaw.has(raw)) continue;
      const source = ct.target.kind === 'source';
      const key = `${ct.label} (${source ? 'null' : ct.config.id})`;
      let node = this.nodes.get(key);
      if (!node) {
        const loaded = this.loadedTarget(ct.label);
        if (!loaded) continue;
        node = { key, label: ct.label, configured: ct, config: source ? undefined : ct.config, loaded, deps: [] };
        this.nodes.set(key, node);
        const same = this.byLabel.get(ct.label);
        if (same) same.push(node);
        else this.byLabel.set(ct.label, [node]);
      }
      nodeOfRaw.set(raw, node);
    }
    for (const [raw, children] of this.memo.edges) {
      if (this.edgesDone.has(raw)) continue;
      const from = nodeOfRaw.get(raw);
      if (!from) continue;
      this.edgesDone.add(raw);
      const rule = from.loaded.target.kind === 'rule' ? from.loaded.target : undefined;
      const written = rule ? explicitAttributes(rule) : undefined;
      const seen = new Set(from.deps.map((e) => e.to));
      for (const child of children) {
        const to = nodeOfRaw.get(child);
        if (!to || seen.has(to) || to === from) continue;
        seen.add(to);
        const attribute = written?.byLabel.get(to.label) ?? (written?.conditions.has(to.label) ? '$config_dependencies' : undefined);
        // A generated file's rule, and whatever a non-rule needs, are no attribute's default.
        from.deps.push({ to, ...(attribute ? { attribute } : {}), implicit: rule !== undefined && attribute === undefined });
      }
    }
  }

  /** Every configured instance of a label, in the order analysis met them. */
  instances(label: string): readonly ConfiguredNode[] {
    return this.byLabel.get(label) ?? [];
  }

  node(label: string, config: BuildConfiguration): ConfiguredNode | undefined {
    return this.nodes.get(`${label} (${config.id})`);
  }
}

/** Analyses each label in the target configuration through `analyzer` (which must use `memo`). */
export function analyzeUniverse(
  analyzer: Analyzer,
  labels: readonly { readonly label: string; readonly fromWildcard: boolean }[],
  onError: (label: string, e: unknown) => boolean,
): void {
  for (const t of labels) {
    try {
      if (t.fromWildcard) analyzer.analyzeFromPattern(t.label);
      else analyzer.analyzeTopLevel(t.label);
    } catch (e) {
      if (!onError(t.label, e)) return;
    }
  }
}
