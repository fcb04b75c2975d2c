import { bazelFlags } from '../core/index.js';
import { commandOptionGroups } from './command-option-groups.js';
import { COMMANDS } from './command-table.js';
import { STARTUP_OPTIONS } from './startup-options.js';

/**
 * `kiln help flags-as-proto`: every option of every command, from the tables the parsers read,
 * and the startup options (command `startup`), as Bazel prints it (base64 of a bazel_flags.FlagCollection, no newline), for IDEs and rc-file
 * language servers. A flag several commands take is one FlagInfo naming them all, sorted by name.
 */
export async function flagsAsProto(): Promise<string> {
  const flags = new Map<string, bazelFlags.FlagInfoInit & { name: string; commands: string[] }>();
  // Bazel marks no startup option as repeatable here (its client keeps them apart from the options parser).
  for (const [name, def] of Object.entries(STARTUP_OPTIONS)) {
    flags.set(name, { name, hasNegativeFlag: !def.unary, documentation: def.help, commands: ['startup'], allowsMultiple: false });
  }
  for (const command of Object.keys(COMMANDS).sort()) {
    for (const group of await commandOptionGroups(command)) {
      for (const def of group.definitions) {
        const known = flags.get(def.name);
        if (known) {
          if (!known.commands.includes(command)) known.commands.push(command);
          continue;
        }
        flags.set(def.name, {
          name: def.name,
          // As Bazel's: only booleans; a tri-state's --noname is a converter's word, not a negative flag.
          hasNegativeFlag: def.type === 'bool',
          documentation: def.help,
          commands: [command],
          ...(def.abbrev !== undefined ? { abbreviation: def.abbrev } : {}),
          allowsMultiple: def.type === 'list' && def.allowMultiple,
        });
      }
    }
  }
  const flagInfos = [...flags.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return Buffer.from(bazelFlags.FlagCollection.encode({ flagInfos })).toString('base64');
}
