import type { Action, Artifact, DerivedArtifact } from '../../actions/index.js';
import { execPropertiesOf, executionRequirementsFromTags } from '../../actions/index.js';
import type { FileEntry } from '../configured/configured-target.js';
import type { RuleContext } from '../configured/rule-context.js';
import { packageOutputDir } from '../configured/target-paths.js';
import { configurationMakeVariables } from '../expansion/configuration-make-variables.js';
import { prepareGenruleCommand, type GenruleCommandAttribute } from '../expansion/genrule-command.js';
import type { LocationEntry } from '../expansion/location-expander.js';
import { uniqueFiles, type RuleResult } from './rule-result.js';

/**
 * genrule (spec, genrule): srcs in the genrule's configuration, tools in the exec configuration
 * (so a genrule reached as a tool is analysed, with its srcs and outs, in the exec configuration);
 * outs under genfiles, or bin with output_to_bindir; one `Genrule` action running the prepared
 * Bash command.
 */
export function analyzeGenrule(ctx: RuleContext): RuleResult {
  const { target } = ctx;
  const executable = ctx.attr<boolean>('executable', false, false);
  if (executable && target.outputs.length !== 1) {
    throw ctx.error('executable', `genrule with 'executable = True' must have exactly one output, got ${target.outputs.length}`);
  }
  const toBindir = ctx.attr<boolean>('output_to_bindir', false, false);
  const outs = target.outputs.map((name) => ctx.outputFile(name, toBindir));
  const srcs = ctx.deps('srcs');
  const tools = ctx.deps('tools', { exec: true });
  const toolchains = ctx.deps('toolchains', { configurable: false });

  const prerequisites = new Map<string, LocationEntry>();
  const add = (label: string, files: readonly FileEntry[]) =>
    prerequisites.set(label, { execPaths: files.map((f) => f.artifact.execPath), rootPaths: files.map((f) => f.rootPath) });
  for (const dep of [...srcs, ...tools]) add(dep.label, dep.files);
  target.outputs.forEach((name, i) => add(ctx.canonicalize(name)!, [outs[i]!]));

  const toolchainVariables = new Map<string, string>();
  for (const tc of toolchains) {
    if (!tc.templateVariables) throw ctx.error('toolchains', `'${tc.label}' does not have mandatory providers: 'TemplateVariableInfo'`);
    for (const [k, v] of tc.templateVariables) if (!toolchainVariables.has(k)) toolchainVariables.set(k, v);
  }

  const commands: Partial<Record<GenruleCommandAttribute, string>> = {};
  for (const a of ['cmd', 'cmd_bash', 'cmd_bat', 'cmd_ps'] as const) commands[a] = ctx.attr<string>(a, '', true);
  const srcFiles = uniqueFiles(srcs.flatMap((d) => d.files));
  const outRoot = (outs[0]?.artifact as DerivedArtifact | undefined)?.root ?? ctx.config.outputDirectories.genfiles;
  const ruleDir = packageOutputDir(outRoot, target.label);
  const command = prepareGenruleCommand({
    ruleLabel: target.label,
    pos: target.location,
    commands,
    srcs: srcFiles.map((f) => f.artifact.execPath),
    outs: outs.map((f) => f.artifact.execPath),
    ruleDir,
    locations: { prerequisites, canonicalize: (raw) => ctx.canonicalize(raw) },
    configVariables: configurationMakeVariables(ctx.config),
    toolchainVariables,
    ...(ctx.javaRuntime ? { javaRuntime: ctx.javaRuntime } : {}),
  });
  const inputs: Artifact[] = [];
  const seen = new Set<string>();
  for (const f of [...srcFiles, ...tools.flatMap((t) => [...t.files, ...t.runfiles])]) {
    if (seen.has(f.artifact.execPath)) continue;
    seen.add(f.artifact.execPath);
    inputs.push(f.artifact);
  }
  const tags = ctx.attr<readonly string[]>('tags', [], false);
  const local = ctx.attr<boolean>('local', false, true);
  const message = ctx.attr<string>('message', '', true);
  const action: Action = {
    owner: target.label,
    location: target.location,
    mnemonic: 'Genrule',
    progressMessage: `${message === '' ? 'Executing genrule' : message} ${target.label}`,
    // Execution runs a command over the 64K limit from a script file; the key covers the whole command.
    argv: command.argv,
    env: {},
    inputs,
    outputs: outs.map((f) => f.artifact as DerivedArtifact),
    executionRequirements: executionRequirementsFromTags(local ? [...tags, 'local'] : tags),
    executableOutputs: executable,
    ...execPropertiesOf(ctx.execProperties()),
  };
  return { files: outs, runfiles: executable ? outs : [], actions: [action] };
}
