import { TargetValue, type BuildConfiguration } from '../analysis/index.js';
import { analysisV2, type blazeQuery, KilnError, protoJson, protoText } from '../core/index.js';
import {
  DEFAULT_INFO,
  NATIVE_RULE_CLASSES,
  BUILD_SETTING_RULE_CLASSES,
  OUTPUT_GROUP_INFO,
  Selector,
  SelectorList,
  type AttrValue,
  type PlainAttrValue,
} from '../loading/index.js';
import { targetMessage, type OutputEnvironment } from '../query/index.js';
import {
  Builtin,
  execResolvedFile,
  None,
  parseFile,
  resolveFile,
  StarCallable,
  StarDict,
  str,
  StarlarkError,
  Thread,
  UNIVERSAL,
  type Value,
} from '../starlark/index.js';
import { shortConfigurationId, type ConfiguredEdge, type ConfiguredNode } from './configured-graph.js';
import type { ConfiguredQueryAnswer } from './configured-query.js';
import { starlarkTargetValue } from './configured-query.js';
import type { ConfiguredQueryOptions } from './configured-query-options.js';

/** `//pkg:x (3f2a1b0)`, `//pkg:x.txt (null)`: Bazel's label output of a configured target. */
export function configuredLabel(node: ConfiguredNode): string {
  return `${node.label} (${shortConfigurationId(node)})`;
}

/**
 * cquery's output in the format the options name (Bazel's cquery output formatters). `onError`
 * receives what could not be printed for a target (a failing `--starlark:expr`), the rest is printed.
 */
export function formatCqueryResult(
  answer: ConfiguredQueryAnswer,
  options: ConfiguredQueryOptions,
  onError: (message: string) => void = (message) => {
    throw new KilnError(message);
  },
): string | Uint8Array {
  const nodes = answer.targets;
  switch (options.output) {
    case 'label':
      return nodes.map((n) => `${configuredLabel(n)}\n`).join('');
    case 'label_kind':
      return nodes.map((n) => `${n.configured.target.kind === 'rule' ? `${n.configured.kindName} rule` : kindText(n)} ${configuredLabel(n)}\n`).join('');
    case 'transitions':
      return nodes.map((n) => transitionsText(n, options.transitions === 'full', options)).join('');
    case 'build':
      return nodes.map((n) => buildText(n, answer)).join('');
    case 'proto':
      return analysisV2.CqueryResult.encode(cqueryResult(answer));
    case 'jsonproto':
      return `${protoJson(analysisV2.CqueryResult, cqueryResult(answer))}\n`;
    case 'textproto':
      return protoText(analysisV2.CqueryResult, cqueryResult(answer));
    case 'starlark':
      return starlarkOutput(nodes, options, onError);
    default:
      throw new KilnError(`Invalid output format '${options.output}'`);
  }
}

function kindText(n: ConfiguredNode): string {
  switch (n.configured.target.kind) {
    case 'source':
      return 'source file';
    case 'generated':
      return 'generated file';
    case 'package_group':
      return 'package group';
    default:
      return `${n.configured.kindName} rule`;
  }
}

/** The transition an edge takes, in Bazel's names: into the exec configuration, or none. */
function transitionName(from: ConfiguredNode, edge: ConfiguredEdge): string {
  if (edge.to.config?.isExec && !from.config?.isExec) return 'ExecutionTransition';
  return 'NoTransition';
}

/**
 * `--output=transitions` (Bazel's TransitionsOutputFormatterCallback): each target, then each of its
 * attribute edges to a configured dependency as `attr#label#transition -> configuration`; `full`
 * adds the options the transition changes (`name:from -> [to]`).
 */
function transitionsText(n: ConfiguredNode, full: boolean, options: ConfiguredQueryOptions): string {
  let out = `${configuredLabel(n)}\n`;
  for (const e of n.deps) {
    if (!e.attribute || e.attribute.startsWith('$') || !e.to.config) continue;
    if (!options.implicitDeps && e.implicit) continue;
    out += `  ${e.attribute}#${e.to.label}#${transitionName(n, e)} -> ${shortConfigurationId(e.to)}\n`;
    if (full && n.config && e.to.config !== n.config) out += optionChanges(n.config, e.to.config);
  }
  return out;
}

function optionChanges(from: BuildConfiguration, to: BuildConfiguration): string {
  let out = '';
  const shown = (v: unknown) => (Array.isArray(v) ? `[${v.join(', ')}]` : String(v));
  for (const def of from.options.registry.definitions()) {
    if (def.executionOnly) continue;
    const a = from.options.get(def.name);
    const b = to.options.get(def.name);
    if (shown(a) !== shown(b)) out += `    ${def.name}:${shown(a)} -> [${shown(b)}]\n`;
  }
  if (from.isExec !== to.isExec) out += `    is exec configuration:${from.isExec} -> [${to.isExec}]\n`;
  if (from.mnemonic !== to.mnemonic) out += `    output directory name:${from.mnemonic} -> [${to.mnemonic}]\n`;
  return out;
}

/** A select() resolved in the node's configuration: the branch whose config_setting matches, else the default. */
function resolvedValue(v: AttrValue, node: ConfiguredNode, answer: ConfiguredQueryAnswer): PlainAttrValue {
  if (!(v instanceof SelectorList)) return v;
  let out: PlainAttrValue | undefined;
  for (const part of v.parts) {
    let value: PlainAttrValue;
    if (part instanceof Selector) {
      const chosen = part.entries.find(([condition]) => {
        const setting = node.config ? answer.graph.node(condition, node.config) : undefined;
        return setting?.configured.configMatch?.matches === true;
      });
      const fallback = part.entries.find(([condition]) => condition === '//conditions:default');
      value = (chosen ?? fallback)?.[1] as PlainAttrValue;
    } else value = part as PlainAttrValue;
    if (value === undefined) continue;
    if (out === undefined) out = value;
    else if (typeof out === 'string' && typeof value === 'string') out = out + value;
    else if (Array.isArray(out) && Array.isArray(value)) out = [...(out as unknown[]), ...(value as unknown[])] as PlainAttrValue;
    else out = value;
  }
  return out ?? null;
}

function quote(s: string): string {
  return JSON.stringify(s);
}

function plain(v: PlainAttrValue, dict: boolean): string {
  if (v === null) return 'None';
  if (typeof v === 'string') return quote(v);
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return String(v);
  const arr = v as readonly unknown[];
  if (dict || (arr.length > 0 && Array.isArray(arr[0]))) {
    return `{${(arr as [string, PlainAttrValue][]).map(([k, x]) => `${quote(k)}: ${plain(x, false)}`).join(', ')}}`;
  }
  return `[${(arr as string[]).map(quote).join(', ')}]`;
}

/**
 * `--output=build`: the rule as BUILD text with its select()s resolved in the target's configuration
 * (Bazel's cquery BuildOutputFormatterCallback), then where it was instantiated.
 */
function buildText(node: ConfiguredNode, answer: ConfiguredQueryAnswer): string {
  const r = node.loaded.target;
  if (r.kind !== 'rule') return '';
  const location = `${answer.absolutePath(r.location.file)}:${r.location.line}:${r.location.col}`;
  let out = `# ${location}\n${r.ruleClass}(\n`;
  const schema = NATIVE_RULE_CLASSES.get(r.ruleClass) ?? BUILD_SETTING_RULE_CLASSES.get(r.ruleClass);
  const names = schema ? [...schema.attributes.keys()].filter((n) => r.attrs.has(n)) : [...r.attrs.keys()];
  if (names[0] !== 'name') names.splice(names.indexOf('name'), 1), names.unshift('name');
  for (const n of names) {
    const type = schema?.attributes.get(n)?.type;
    out += `  ${n} = ${plain(resolvedValue(r.attrs.get(n)!, node, answer), type?.includes('dict') === true)},\n`;
  }
  out += ')\n';
  const name = node.loaded.label.name;
  out += `# Rule ${name} instantiated at (most recent call last):\n#   ${location} in <toplevel>\n\n`;
  return out;
}

function configurationMessage(config: BuildConfiguration, id: number): analysisV2.ConfigurationInit {
  return { id, mnemonic: config.mnemonic, platformName: config.cpu, checksum: config.id, isTool: config.isExec };
}

/** analysis_v2's CqueryResult: each target as build.proto's Target, with its configuration. */
function cqueryResult(answer: ConfiguredQueryAnswer): analysisV2.CqueryResultInit {
  const ids = new Map<string, number>();
  const configurations: analysisV2.ConfigurationInit[] = [];
  const idOf = (config: BuildConfiguration): number => {
    let id = ids.get(config.id);
    if (id === undefined) {
      ids.set(config.id, (id = ids.size + 1));
      configurations.push(configurationMessage(config, id));
    }
    return id;
  };
  const env: OutputEnvironment = {
    absolutePath: answer.absolutePath,
    successors: () => [],
    loadsOf: () => [],
    graphFactored: false,
    graphNodeLimit: -1,
    graphConditionalEdgesLimit: -1,
  };
  return {
    results: answer.targets.map((n) => ({
      target: targetMessage(n.loaded, env) as blazeQuery.TargetInit,
      ...(n.config ? { configuration: { checksum: n.config.id }, configurationId: idOf(n.config) } : {}),
    })),
    configurations,
  };
}

/** `providers(target)`: the target's providers by key, as Bazel's cquery Starlark output offers it. */
const providersBuiltin = new Builtin('providers', (_thread, args) => {
  const value = args[0];
  if (args.length !== 1 || !(value instanceof TargetValue)) throw new StarlarkError('providers() takes exactly one argument, a target');
  const ct = value.configured;
  const dict = new StarDict();
  dict.set(DEFAULT_INFO.key, value.getIndex(DEFAULT_INFO));
  if (ct.outputGroups.size > 0 || ct.providers?.has(OUTPUT_GROUP_INFO.key)) dict.set(OUTPUT_GROUP_INFO.key, value.getIndex(OUTPUT_GROUP_INFO));
  for (const [key, instance] of ct.providers ?? []) if (key !== DEFAULT_INFO.key && key !== OUTPUT_GROUP_INFO.key) dict.set(key, instance);
  return dict;
});

/**
 * `--output=starlark`: the `--starlark:expr` expression evaluated for each target by Kiln's Starlark
 * interpreter, with `target` bound to it (and `providers`), printed with str() (a string as it is).
 * A syntax error in the expression throws; an evaluation error is reported per target.
 */
function starlarkOutput(nodes: readonly ConfiguredNode[], options: ConfiguredQueryOptions, onError: (message: string) => void): string {
  const resultName = '__cquery_result';
  const names = ['target', 'providers'];
  const fromFile = options.starlarkFileText !== undefined;
  // With --starlark:file, its module defines format(target); the expression calls it.
  let format: Value | undefined;
  if (fromFile) {
    const module = parseFile(options.starlarkFileText!, options.starlarkFile ?? '<--starlark:file>');
    resolveFile(module, {}, new Set(['providers']), UNIVERSAL);
    const globals = execResolvedFile(new Thread('cquery'), module, new Map<string, Value>([['providers', providersBuiltin]]));
    format = globals.get('format');
    if (!(format instanceof StarCallable)) throw new KilnError(`${options.starlarkFile}: the file must define a function 'format(target)'`);
  }
  const file = parseFile(`${resultName} = (${fromFile ? '__format(target)' : options.starlarkExpr})\n`, fromFile ? '<--starlark:file>' : '<--starlark:expr>');
  resolveFile(file, {}, new Set([...names, '__format']), UNIVERSAL);
  let out = '';
  for (const node of nodes) {
    const predeclared = new Map<string, Value>([
      ['target', starlarkTargetValue(node)],
      ['providers', providersBuiltin],
      ['__format', format ?? None],
    ]);
    let value: Value;
    try {
      value = execResolvedFile(new Thread('cquery'), file, predeclared).get(resultName)!;
    } catch (e) {
      if (!(e instanceof KilnError)) throw e;
      // Bazel's StarlarkOutputFormatterCallback: the error for this target, and on with the others.
      onError(`Starlark evaluation error for ${node.label}: ${e.message}`);
      continue;
    }
    out += `${str(value)}\n`;
  }
  return out;
}
