import { createHash } from 'node:crypto';
import type { Action } from '../actions/index.js';
import type { BuildConfiguration } from '../analysis/index.js';
import { analysisV2, protoJson, protoText } from '../core/index.js';
import type { ConfiguredNode } from './configured-graph.js';
import type { ConfiguredQueryAnswer } from './configured-query.js';
import type { ConfiguredQueryOptions } from './configured-query-options.js';

/** One action of the result with the configured target that registered it. */
export interface QueriedAction {
  readonly action: Action;
  readonly owner: ConfiguredNode;
  readonly config: BuildConfiguration;
  /** Kiln's key of the action as analysis describes it (see {@link analysisActionKey}). */
  readonly actionKey: string;
}

/**
 * The action key aquery prints: SHA-256 over everything analysis fixes about the action (mnemonic,
 * command line, environment, inputs and outputs by exec path, execution requirements and
 * properties, timeout, in-process work). Like Bazel's ActionKey it covers the inputs by path, not by
 * content: the contents of derived inputs are unknown until they are built, and the execution-time
 * cache key (the REAPI Action digest) adds them.
 */
export function analysisActionKey(action: Action): string {
  const fields = [
    'kiln-aquery-action-key-1',
    action.mnemonic,
    [...action.argv],
    Object.entries(action.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    action.inputs.map((i) => i.execPath),
    action.outputs.map((o) => (o.type ? `${o.execPath}\0${o.type}` : o.execPath)),
    [...action.executionRequirements],
    Object.entries(action.execProperties ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    action.executableOutputs,
    action.timeoutSeconds ?? null,
    action.inProcess ?? null,
  ];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

/** The actions of the result's configured targets that pass every action filter of the expression. */
export function queriedActions(answer: ConfiguredQueryAnswer): QueriedAction[] {
  const out: QueriedAction[] = [];
  for (const owner of answer.targets) {
    if (!owner.config) continue;
    for (const action of owner.configured.actions) {
      const passes = answer.actionFilters.every((f) => {
        switch (f.kind) {
          case 'mnemonic':
            return f.pattern.test(action.mnemonic);
          case 'inputs':
            return action.inputs.some((i) => f.pattern.test(i.execPath));
          case 'outputs':
            return action.outputs.some((o) => f.pattern.test(o.execPath));
        }
      });
      if (passes) out.push({ action, owner, config: owner.config, actionKey: analysisActionKey(action) });
    }
  }
  return out;
}

/** Bazel's ShellEscaper: a word of safe characters as it is, anything else in single quotes. */
export function shellEscape(word: string): string {
  if (word === '') return "''";
  if (/^[A-Za-z0-9@%_\-+=:,./]+$/.test(word)) return word;
  return `'${word.replace(/'/g, "'\\''")}'`;
}

/** aquery's output in the format the options name. */
export function formatAqueryResult(answer: ConfiguredQueryAnswer, options: ConfiguredQueryOptions): string | Uint8Array {
  const actions = queriedActions(answer);
  const executionPlatform = answer.configurations.exec.platform.label;
  switch (options.output) {
    case 'summary':
      return summaryText(actions, executionPlatform);
    case 'jsonproto':
      return `${protoJson(analysisV2.ActionGraphContainer, actionGraphContainer(actions, executionPlatform, options))}\n`;
    case 'textproto':
      return protoText(analysisV2.ActionGraphContainer, actionGraphContainer(actions, executionPlatform, options));
    case 'proto':
      return analysisV2.ActionGraphContainer.encode(actionGraphContainer(actions, executionPlatform, options));
    default:
      return actions.map((a) => actionText(a, executionPlatform, options)).join('');
  }
}

/**
 * `--output=text` (Bazel's ActionGraphTextOutputFormatterCallback): each action's progress message,
 * mnemonic, target, configuration, execution platform, key, inputs, outputs, environment,
 * execution info and shell-escaped command line, then the configuration's checksum.
 */
function actionText(q: QueriedAction, executionPlatform: string, options: ConfiguredQueryOptions): string {
  const { action } = q;
  let out = `action '${action.progressMessage}'\n`;
  out += `  Mnemonic: ${action.mnemonic}\n`;
  out += `  Target: ${q.owner.label}\n`;
  out += `  Configuration: ${q.config.mnemonic}\n`;
  out += `  Execution platform: ${executionPlatform}\n`;
  out += `  ActionKey: ${q.actionKey}\n`;
  if (options.includeArtifacts) {
    out += `  Inputs: [${action.inputs.map((i) => i.execPath).join(', ')}]\n`;
    out += `  Outputs: [${action.outputs.map((o) => (o.type === 'directory' ? `${o.execPath} (TreeArtifact)` : o.execPath)).join(', ')}]\n`;
  }
  const env = Object.entries(action.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (env.length > 0) out += `  Environment: [${env.map(([k, v]) => `${k}=${v}`).join(', ')}]\n`;
  const info = executionInfo(action);
  if (info.length > 0) out += `  ExecutionInfo: {${info.map(([k, v]) => `${k}: ${v}`).join(', ')}}\n`;
  if (options.includeCommandline && action.argv.length > 0) {
    out += `  Command Line: (exec ${action.argv.map(shellEscape).join(' \\\n    ')})\n`;
  }
  out += `# Configuration: ${q.config.id}\n# Execution platform: ${executionPlatform}\n\n`;
  return out;
}

function executionInfo(action: Action): [string, string][] {
  const out: [string, string][] = action.executionRequirements.map((r) => [r, '']);
  if (action.timeoutSeconds !== undefined) out.push(['timeout', String(action.timeoutSeconds)]);
  for (const [k, v] of Object.entries(action.execProperties ?? {})) out.push([k, v]);
  return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `--output=summary` (present-day Bazel's ActionGraphSummaryOutputFormatterCallback): counts per mnemonic, configuration and platform. */
function summaryText(actions: readonly QueriedAction[], executionPlatform: string): string {
  const count = (key: (a: QueriedAction) => string): string => {
    const counts = new Map<string, number>();
    for (const a of actions) counts.set(key(a), (counts.get(key(a)) ?? 0) + 1);
    return [...counts]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, n]) => `  ${k}: ${n}\n`)
      .join('');
  };
  let out = `${actions.length} total action${actions.length === 1 ? '' : 's'}.\n\n`;
  if (actions.length === 0) return out;
  out += `Mnemonics:\n${count((a) => a.action.mnemonic)}\n`;
  out += `Configurations:\n${count((a) => a.config.mnemonic)}\n`;
  out += `Execution Platforms:\n${count(() => executionPlatform)}\n`;
  return out;
}

/**
 * analysis_v2's ActionGraphContainer: ids from 1 in the order things are first met; a path is
 * its chain of path fragments; each action's inputs one set of files (shared by actions with the
 * same inputs).
 */
export function actionGraphContainer(
  actions: readonly QueriedAction[],
  executionPlatform: string,
  options: Pick<ConfiguredQueryOptions, 'includeArtifacts' | 'includeCommandline'>,
): analysisV2.ActionGraphContainerInit {
  const container = {
    artifacts: [] as analysisV2.ArtifactInit[],
    actions: [] as analysisV2.ActionInit[],
    targets: [] as analysisV2.TargetInit[],
    depSetOfFiles: [] as analysisV2.DepSetOfFilesInit[],
    configuration: [] as analysisV2.ConfigurationInit[],
    ruleClasses: [] as analysisV2.RuleClassInit[],
    pathFragments: [] as analysisV2.PathFragmentInit[],
  };
  const fragmentIds = new Map<string, number>();
  const fragment = (path: string): number => {
    const known = fragmentIds.get(path);
    if (known !== undefined) return known;
    const slash = path.lastIndexOf('/');
    const parentId = slash < 0 ? undefined : fragment(path.slice(0, slash));
    const id = fragmentIds.size + 1;
    fragmentIds.set(path, id);
    container.pathFragments.push({ id, label: path.slice(slash + 1), ...(parentId === undefined ? {} : { parentId }) });
    return id;
  };
  const artifactIds = new Map<string, number>();
  const artifact = (execPath: string, tree: boolean): number => {
    let id = artifactIds.get(execPath);
    if (id === undefined) {
      artifactIds.set(execPath, (id = artifactIds.size + 1));
      container.artifacts.push({ id, pathFragmentId: fragment(execPath), ...(tree ? { isTreeArtifact: true } : {}) });
    }
    return id;
  };
  const ids = <K>(map: Map<K, number>, key: K, add: (id: number) => void): number => {
    let id = map.get(key);
    if (id === undefined) {
      map.set(key, (id = map.size + 1));
      add(id);
    }
    return id;
  };
  const targetIds = new Map<string, number>();
  const ruleClassIds = new Map<string, number>();
  const configIds = new Map<string, number>();
  const depSetIds = new Map<string, number>();
  for (const q of actions) {
    const { action } = q;
    const ruleClassId = ids(ruleClassIds, q.owner.configured.kindName, (id) => container.ruleClasses.push({ id, name: q.owner.configured.kindName }));
    const targetId = ids(targetIds, q.owner.label, (id) => container.targets.push({ id, label: q.owner.label, ruleClassId }));
    const configurationId = ids(configIds, q.config.id, (id) =>
      container.configuration.push({ id, mnemonic: q.config.mnemonic, platformName: q.config.cpu, checksum: q.config.id, isTool: q.config.isExec }),
    );
    const message: analysisV2.ActionInit = {
      targetId,
      actionKey: q.actionKey,
      mnemonic: action.mnemonic,
      configurationId,
      executionPlatform,
      ...(options.includeCommandline ? { arguments: [...action.argv] } : {}),
      environmentVariables: Object.entries(action.env)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, value]) => ({ key, value })),
      executionInfo: executionInfo(action).map(([key, value]) => ({ key, value })),
      ...(action.executableOutputs ? { isExecutable: true } : {}),
    };
    if (options.includeArtifacts) {
      const inputs = action.inputs.map((i) => artifact(i.execPath, i.kind === 'derived' && i.type === 'directory'));
      if (inputs.length > 0) {
        const depSetId = ids(depSetIds, inputs.join(','), (id) => container.depSetOfFiles.push({ id, directArtifactIds: inputs }));
        message.inputDepSetIds = [depSetId];
      }
      const outputs = action.outputs.map((o) => artifact(o.execPath, o.type === 'directory'));
      message.outputIds = outputs;
      if (outputs.length > 0) message.primaryOutputId = outputs[0]!;
    }
    container.actions.push(message);
  }
  return container;
}
