import { BUILD_OPTIONS, formatDuration, type OptionDefinition } from '../analysis/index.js';

/** Commands whose options are the build options (Bazel's `help build` lists the same set). */
const BUILDING_COMMANDS = new Set(['build', 'run', 'test']);

/** Commands with a text of their own: how they are called and what they take. */
const COMMAND_USAGE: Readonly<Record<string, string>> = {
  cquery: 'Usage: kiln cquery <options> <query-expression>',
  aquery: 'Usage: kiln aquery <options> <query-expression>',
  info: 'Usage: kiln info <options> [key...]',
  shutdown: 'Usage: kiln shutdown [--iff_heap_size_greater_than=N]',
};

const COMMAND_NOTES: Readonly<Record<string, string>> = {
  cquery:
    "The query language is query's (see 'kiln help query'), evaluated over the configured targets of the build\n" +
    'options: a target pattern stands for each configuration its targets were analysed in. config(expr, target|exec|null|ID)\n' +
    'picks one. The universe is --universe_scope, else the target patterns of the expression.\n',
  aquery:
    "The query language is cquery's; mnemonic(regex, expr), inputs(regex, expr) and outputs(regex, expr) keep the actions\n" +
    'whose mnemonic, some input or some output matches the whole regex.\n',
  info:
    'Keys: bazel-bin, bazel-genfiles, bazel-testlogs, character-encoding, command_log, committed-heap-size, execution_root,\n' +
    'install_base, kiln-bin, kiln-genfiles, kiln-testlogs, max-heap-size, output_base, output_path, package_path, release,\n' +
    'server_pid, used-heap-size, workspace. Bazel keys Kiln has no value for (java-home, java-runtime, java-vm, gc-count,\n' +
    'gc-time, server_log, repository_cache) are unknown keys, as Bazel reports them: exit code 2.\n',
  shutdown: 'Kiln keeps no server, so there is nothing to stop: it exits 0.\n',
};

/** Commands that take the build options (their help lists them). */
const BUILD_OPTION_COMMANDS = new Set([...BUILDING_COMMANDS, 'cquery', 'aquery', 'info']);

/**
 * `kiln help <command>`: the command's usage and, for the commands that build, every option of the
 * registry in Bazel's `help build` layout (`--[no]name [-x] (type; default: "v")` then the help);
 * `own` are the command's options besides the build options (cquery's and aquery's).
 */
export function commandHelp(command: string, summary: string, own: readonly OptionDefinition[] = []): string {
  const usage =
    COMMAND_USAGE[command] ?? (BUILDING_COMMANDS.has(command) ? `Usage: kiln ${command} <options> <targets>` : `Usage: kiln ${command} <options> ...`);
  let text = `${usage}\n\n${summary}\n`;
  const notes = COMMAND_NOTES[command];
  if (notes) text += `\n${notes}`;
  if (!BUILD_OPTION_COMMANDS.has(command)) return notes ? text : `${text}\nRun 'kiln ${command} --help' for its options.\n`;
  if (own.length > 0) {
    text += `\nOptions of ${command}:\n`;
    for (const def of [...own].sort((a, b) => a.name.localeCompare(b.name))) text += optionHelp(def);
  }
  text += own.length > 0 ? '\nBuild options:\n' : '\nOptions:\n';
  const definitions = [...BUILD_OPTIONS.definitions()].filter((d) => !d.internal).sort((a, b) => a.name.localeCompare(b.name));
  for (const def of definitions) text += optionHelp(def);
  return text;
}

function optionHelp(def: OptionDefinition): string {
  const name = def.type === 'bool' ? `--[no]${def.name}` : `--${def.name}`;
  const abbrev = def.abbrev === undefined ? '' : ` [-${def.abbrev}]`;
  const unimplemented = def.notImplemented
    ? `\n    Accepted but ${def.notImplemented.severity === 'error' ? 'refused' : 'ignored'}: ${def.notImplemented.reason}.`
    : '';
  return `  ${name}${abbrev} (${typeDescription(def)})\n    ${def.help}${unimplemented}\n`;
}

function typeDescription(def: OptionDefinition): string {
  switch (def.type) {
    case 'bool':
      return `a boolean; default: "${def.default}"`;
    case 'int': {
      const keyword = Object.entries(def.keywords ?? {}).find(([, v]) => v === def.default)?.[0];
      return `an integer; default: "${keyword ?? def.default}"`;
    }
    case 'duration':
      return `an immutable length of time; default: "${formatDuration(def.default)}"`;
    case 'string':
      return `${def.allowed ? def.allowed.values.join(', ') : 'a string'}; default: "${def.default}"`;
    case 'list':
      return def.allowMultiple ? 'a string; may be used multiple times' : 'comma-separated list of options';
  }
}
