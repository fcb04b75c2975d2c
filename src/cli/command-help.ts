import { optionsHelp } from '../core/options/index.js';
import type { OptionGroup } from './command-options.js';

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

/**
 * `kiln help <command>`: the command's usage, notes and its option tables in Bazel's `help build`
 * layout (`--[no]name [-x] (type; default: "v")` then the help), the same tables its parser reads.
 */
export function commandHelp(command: string, summary: string, groups: readonly OptionGroup[]): string {
  const usage =
    COMMAND_USAGE[command] ?? (BUILDING_COMMANDS.has(command) ? `Usage: kiln ${command} <options> <targets>` : `Usage: kiln ${command} <options> ...`);
  let text = `${usage}\n\n${summary}\n`;
  const notes = COMMAND_NOTES[command];
  if (notes) text += `\n${notes}`;
  for (const group of groups) text += `\n${group.title}:\n${optionsHelp(group.definitions)}`;
  return text;
}
