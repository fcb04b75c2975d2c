import { BUILD_OPTIONS, formatDuration, type OptionDefinition } from '../analysis/index.js';

/** Commands whose options are the build options (Bazel's `help build` lists the same set). */
const BUILDING_COMMANDS = new Set(['build', 'run', 'test']);

/**
 * `kiln help <command>`: the command's usage and, for the commands that build, every option of the
 * registry in Bazel's `help build` layout (`--[no]name [-x] (type; default: "v")` then the help).
 */
export function commandHelp(command: string, summary: string): string {
  const usage = BUILDING_COMMANDS.has(command) ? `Usage: kiln ${command} <options> <targets>` : `Usage: kiln ${command} <options> ...`;
  let text = `${usage}\n\n${summary}\n`;
  if (!BUILDING_COMMANDS.has(command)) return `${text}\nRun 'kiln ${command} --help' for its options.\n`;
  text += '\nOptions:\n';
  const definitions = [...BUILD_OPTIONS.definitions()].sort((a, b) => a.name.localeCompare(b.name));
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
