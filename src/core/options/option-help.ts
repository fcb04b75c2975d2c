import { formatDuration, type OptionDefinition } from './option-definition.js';

/**
 * The help of a table's options in Bazel's `help build` layout, sorted by name:
 * `--[no]name [-x] (type; default: "v")`, then the help on the next line.
 */
export function optionsHelp(definitions: Iterable<OptionDefinition>): string {
  return [...definitions]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map(optionHelp)
    .join('');
}

function optionHelp(def: OptionDefinition): string {
  const name = def.type === 'bool' || (def.type === 'string' && def.triState) ? `--[no]${def.name}` : `--${def.name}`;
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
      if (def.triState) return `a tri-state (auto, yes, no); default: "${def.default}"`;
      return `${def.allowed ? def.allowed.values.join(', ') : 'a string'}; default: "${def.default}"`;
    case 'list':
      return def.allowMultiple ? 'a string; may be used multiple times' : 'comma-separated list of options';
  }
}
