import type { CommandOptions, OptionGroup } from './command-options.js';
import { COMMANDS } from './command-table.js';

/** Commands whose options are the build options (Bazel: they inherit build's). */
const BUILD_OPTION_COMMANDS = new Set(['build', 'test', 'run', 'info']);

/** The option tables of `command`, as its parser reads them: what `kiln help COMMAND` and `kiln help flags-as-proto` list. */
export async function commandOptionGroups(command: string): Promise<readonly OptionGroup[]> {
  const buildGroup = async (title: string): Promise<OptionGroup> => ({
    title,
    definitions: (await import('../analysis/index.js')).BUILD_OPTIONS.definitions(),
  });
  if (BUILD_OPTION_COMMANDS.has(command)) return [await buildGroup('Options')];
  if (command === 'cquery' || command === 'aquery') {
    const own = (await import('../build/index.js')).configuredQueryOptionDefinitions(command);
    return [{ title: `Options of ${command}`, definitions: own }, await buildGroup('Build options')];
  }
  if (command === 'clean') {
    const { CLEAN_OPTION_DEFINITIONS } = await import('./commands/clean.js');
    return [{ title: 'Options of clean', definitions: CLEAN_OPTION_DEFINITIONS }, await buildGroup('Build options')];
  }
  if (command === 'query') return [{ title: 'Options', definitions: (await import('../query/index.js')).QUERY_OPTION_DEFINITIONS }];
  return (await ownCommandOptions(command))?.groups ?? [];
}

/** The table of a command that has its own (the server roles, starlark, shutdown), with its usage text. */
export async function ownCommandOptions(command: string): Promise<CommandOptions | undefined> {
  const entry = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  return (await entry?.load())?.OPTIONS;
}
