import { BUILD_OPTIONS, BuildOptions, parseBuildOptions } from '../analysis/index.js';
import { UsageError } from '../core/index.js';
import type { OptionDefinition, OptionRegistry, OptionValue } from '../core/options/index.js';
import { COMMON_QUERY_OPTION_DEFINITIONS, parseTargetPattern, TargetPatternError } from '../query/index.js';

export type ConfiguredQueryCommand = 'cquery' | 'aquery';

/** cquery's output formats (Bazel's CqueryOptions.outputFormat); `graph` and `streamed_proto` are left out. */
export const CQUERY_OUTPUTS = ['label', 'label_kind', 'build', 'transitions', 'proto', 'jsonproto', 'textproto', 'starlark'] as const;
/** aquery's (Bazel's AqueryOptions): the text listing, the summary and analysis_v2's ActionGraphContainer. */
export const AQUERY_OUTPUTS = ['text', 'summary', 'jsonproto', 'textproto', 'proto'] as const;

/** What cquery and aquery read besides the build options, with Bazel's names and defaults. */
export interface ConfiguredQueryOptions {
  readonly output: string;
  readonly transitions: 'none' | 'lite' | 'full';
  readonly starlarkExpr: string;
  /** `--starlark:file`: a file defining `format(target)`, called for each target (its text is read by the caller into starlarkFileText). */
  readonly starlarkFile: string | undefined;
  readonly starlarkFileText?: string;
  readonly universeScope: readonly string[];
  readonly implicitDeps: boolean;
  readonly toolDeps: boolean;
  readonly queryFile: string | undefined;
  readonly includeCommandline: boolean;
  readonly includeArtifacts: boolean;
  readonly keepGoing: boolean;
}

function str(name: string, def: string, help: string, allowed?: readonly string[]): OptionDefinition {
  return allowed
    ? { name, type: 'string', default: def, help, allowed: { values: allowed, describe: `${name} value` } }
    : { name, type: 'string', default: def, help };
}

function bool(name: string, def: boolean, help: string): OptionDefinition {
  return { name, type: 'bool', default: def, help };
}

const CQUERY_DEFINITIONS: readonly OptionDefinition[] = [
  ...COMMON_QUERY_OPTION_DEFINITIONS,
  str('output', 'label', `The output format: ${CQUERY_OUTPUTS.join(', ')}.`),
  str('transitions', 'none', 'With --output=transitions: how much of each configuration transition to print.', ['none', 'lite', 'full']),
  str('starlark:expr', 'str(target.label)', "With --output=starlark: the Starlark expression printed for each target, with 'target' bound to it."),
  str('starlark:file', '', 'With --output=starlark: a Starlark file defining format(target), whose result is printed for each target.'),
];

const AQUERY_DEFINITIONS: readonly OptionDefinition[] = [
  ...COMMON_QUERY_OPTION_DEFINITIONS,
  str('output', 'text', `The output format: ${AQUERY_OUTPUTS.join(', ')}.`),
  bool('include_commandline', true, "Print each action's command line."),
  bool('include_artifacts', true, "Print each action's inputs and outputs."),
  bool('include_aspects', true, 'Kiln has no aspects: accepted, without effect.'),
  bool('include_param_files', false, 'Kiln writes no param files at analysis: accepted, without effect.'),
];

const REGISTRIES: Readonly<Record<ConfiguredQueryCommand, OptionRegistry>> = {
  cquery: BUILD_OPTIONS.extendedWith(CQUERY_DEFINITIONS),
  aquery: BUILD_OPTIONS.extendedWith(AQUERY_DEFINITIONS),
};

/** A cquery or aquery command line: the build options (keying the configuration as `kiln build`'s), the query's, the expression's words. */
export interface ConfiguredQueryCommandLine {
  readonly options: BuildOptions;
  readonly query: ConfiguredQueryOptions;
  readonly residue: readonly string[];
  readonly warnings: readonly string[];
}

/**
 * Reads a cquery or aquery command line with the one option parser: the build options and the
 * command's own in one table, as Bazel's command takes both. The build options are then kept
 * apart, so that `--output` never changes the configuration (nor its id).
 */
export function parseConfiguredQueryCommandLine(command: ConfiguredQueryCommand, args: readonly string[]): ConfiguredQueryCommandLine {
  const parsed = parseBuildOptions(args, REGISTRIES[command]);
  const all = parsed.options;
  const explicit = new Map<string, OptionValue>();
  for (const name of BUILD_OPTIONS.names()) if (all.isSet(name)) explicit.set(name, all.get(name));
  const options = new BuildOptions(BUILD_OPTIONS, explicit, all.userFlags);
  const universeScope = all.getList('universe_scope');
  for (const pattern of universeScope) {
    try {
      parseTargetPattern(pattern);
    } catch (e) {
      if (!(e instanceof TargetPatternError)) throw e;
      throw new UsageError(`While parsing option --universe_scope=${universeScope.join(',')}: ${e.message}`, undefined, { cause: e });
    }
  }
  const output = all.getString('output');
  const outputs: readonly string[] = command === 'cquery' ? CQUERY_OUTPUTS : AQUERY_OUTPUTS;
  if (!outputs.includes(output)) throw new UsageError(`Invalid output format '${output}'. Valid values are: ${outputs.join(', ')}`);
  const query: ConfiguredQueryOptions = {
    output,
    transitions: (command === 'cquery' ? all.getString('transitions') : 'none') as ConfiguredQueryOptions['transitions'],
    starlarkExpr: command === 'cquery' ? all.getString('starlark:expr') : '',
    starlarkFile: command === 'cquery' ? all.getString('starlark:file') || undefined : undefined,
    universeScope,
    implicitDeps: all.getBool('implicit_deps'),
    toolDeps: all.getBool('tool_deps'),
    queryFile: all.getString('query_file') || undefined,
    includeCommandline: command === 'aquery' ? all.getBool('include_commandline') : true,
    includeArtifacts: command === 'aquery' ? all.getBool('include_artifacts') : true,
    keepGoing: all.getBool('keep_going'),
  };
  // Bazel's own check: the transitions format needs to be told how much to print.
  if (command === 'cquery' && output === 'transitions' && query.transitions === 'none') {
    throw new UsageError("Instead of using --output=transitions, set the --transitions flag explicitly to 'lite' or 'full'");
  }
  if (query.starlarkFile !== undefined && all.isSet('starlark:expr')) throw new UsageError('You can only specify one of --starlark:expr or --starlark:file');
  return { options, query, residue: parsed.residue, warnings: parsed.warnings };
}

/** The option definitions `kiln help cquery` and `kiln help aquery` list besides the build options. */
export function configuredQueryOptionDefinitions(command: ConfiguredQueryCommand): readonly OptionDefinition[] {
  return command === 'cquery' ? CQUERY_DEFINITIONS : AQUERY_DEFINITIONS;
}
