import { UsageError } from '../core/index.js';
import type { RcOption } from './rc-file-reader.js';

/**
 * The commands whose rc lines a command also takes, most general first, from Bazel's `@Command`
 * annotations (`inheritsOptionsFrom`): test, run, cquery, aquery, info and clean inherit build;
 * coverage and fetch inherit test; query and the rest only their own. `always` and `common` come
 * before all of them (BlazeOptionHandler.getCommandNamesToParse).
 */
const INHERITS: Readonly<Record<string, readonly string[]>> = {
  build: [],
  test: ['build'],
  run: ['build'],
  cquery: ['build'],
  aquery: ['build'],
  info: ['build'],
  clean: ['build'],
  print_action: ['build'],
  'mobile-install': ['build'],
  coverage: ['build', 'test'],
  fetch: ['build', 'test'],
};

/** Bazel's command names (an rc line for another word is warned about and skipped), and Kiln's own. */
const KNOWN_COMMANDS = new Set([
  'analyze-profile',
  'aquery',
  'build',
  'canonicalize-flags',
  'clean',
  'config',
  'coverage',
  'cquery',
  'dump',
  'fetch',
  'help',
  'info',
  'license',
  'mobile-install',
  'mod',
  'print_action',
  'query',
  'run',
  'shutdown',
  'sync',
  'test',
  'vendor',
  'version',
  // Kiln's own commands.
  'starlark',
  'cluster',
  'scheduler',
  'storage',
  'executor',
]);

/** The pseudo-commands of rc lines: every command takes them (`always` strictly, `common` when it knows the option). */
const PSEUDO_COMMANDS = ['always', 'common', 'startup'];

/** Does `command` accept the option that `word` (a word starting with `-`) begins? */
export type SupportsOption = (command: string, word: string) => boolean;

/** The commands an rc `common` option must be known to at least one of (else it is an error, as in Bazel). */
export interface RcExpansionSettings {
  readonly supportsOption: SupportsOption;
  /** Every command Kiln parses options for: a `common` option none of them knows is an error. */
  readonly allCommands: readonly string[];
  /** `linux`, `macos`, ... for `--enable_platform_specific_config`. */
  readonly platform: string;
}

export interface RcExpansion {
  /** The command line with the rc options in front and every `--config` expanded in place. */
  readonly args: string[];
  /** What `--announce_rc` prints, one INFO message each (without the `INFO: ` prefix). */
  readonly notes: string[];
  readonly warnings: string[];
  readonly announce: boolean;
}

/** Options of every command that the expansion itself consumes (Bazel's CommonCommandOptions). */
const COMMON_COMMAND_OPTIONS = ['config', 'announce_rc', 'enable_platform_specific_config'];

interface Chunk {
  readonly source: string;
  readonly options: RcOption[];
}

/** A word with the rc line it came from (none for the command line). */
interface Word {
  readonly text: string;
  readonly from?: RcOption;
}

/**
 * Applies rc options to one command as Bazel's server does (BlazeOptionHandler, ConfigExpander):
 * for `always`, `common`, the inherited commands and the command itself in that order, each rc
 * file's chunk of options in rc order; then the command line; then every `--config=NAME` (from
 * either) replaced in place by the `CMD:NAME` lines of those same commands, recursively; then the
 * platform's config when `--enable_platform_specific_config` is on. A `common` option the command
 * does not support is skipped (an error when no command supports it); an unknown option anywhere
 * else in an rc file is an error naming the file and line.
 * @throws UsageError
 */
export function expandRcOptions(command: string, rcOptions: readonly RcOption[], args: readonly string[], settings: RcExpansionSettings): RcExpansion {
  const chain = ['always', 'common', ...(INHERITS[command] ?? []), command];
  const notes: string[] = [];
  const warnings: string[] = [];
  for (const o of rcOptions) {
    const base = o.command.split(':', 1)[0]!;
    if (!KNOWN_COMMANDS.has(base) && !PSEUDO_COMMANDS.includes(base)) {
      const warning = `while reading option defaults file '${o.source}':\n  invalid command name '${o.command}'.`;
      if (!warnings.includes(warning)) warnings.push(warning);
    }
  }
  const chunksOf = chunker(rcOptions);
  const supported = (word: string) => isCommonCommandOption(word) || settings.supportsOption(command, word);
  const knownSomewhere = (word: string) => isCommonCommandOption(word) || settings.allCommands.some((c) => settings.supportsOption(c, word));

  /** The words of a chunk this command takes; `common` ones it does not support go to `ignored`. */
  const take = (key: string, chunk: Chunk, ignored: string[]): Word[] => {
    const out: Word[] = [];
    for (const group of optionGroups(chunk.options)) {
      const head = group[0]!;
      if (head.option.startsWith('-') && head.option !== '--' && !supported(head.option)) {
        if (key === 'common' && knownSomewhere(head.option)) {
          for (const g of group) ignored.push(g.option);
          continue;
        }
        throw new UsageError(`${head.source}:${head.line}: Unrecognized option: ${head.option}`);
      }
      for (const g of group) out.push({ text: g.option, from: g });
    }
    return out;
  };

  const words: Word[] = [];
  for (const key of chain) {
    for (const chunk of chunksOf(key)) {
      const inherited = key === command ? '' : 'Inherited ';
      let note = `Reading rc options for '${command}' from ${chunk.source}:\n  ${inherited}'${key}' options: ${chunk.options.map((o) => o.option).join(' ')}`;
      const ignored: string[] = [];
      for (const w of take(key, chunk, ignored)) words.push(w);
      if (ignored.length > 0) note += `\n  Ignored as unsupported by '${command}': ${ignored.join(' ')}`;
      notes.push(note);
    }
  }
  for (const text of args) words.push({ text });

  const configsExpanded: string[] = [];
  const definitionOf = (name: string, ancestors: readonly string[], ignored: string[]): string[] => {
    configsExpanded.push(name);
    const out: string[] = [];
    let found = false;
    for (const key of chain) {
      for (const chunk of chunksOf(`${key}:${name}`)) {
        found = true;
        notes.push(`Found applicable config definition ${key}:${name} in file ${chunk.source}: ${chunk.options.map((o) => o.option).join(' ')}`);
        for (const w of take(key, chunk, ignored)) {
          if (!w.text.startsWith('--config')) {
            out.push(w.text);
            continue;
          }
          const eq = w.text.indexOf('=');
          if (eq < 0) {
            throw new UsageError(
              `In file ${chunk.source}, the definition of config ${name} expands to another config that either has no value or is not in the form --config=value. For recursive config definitions, please do not provide the value in a separate token, such as in the form '--config value'.`,
            );
          }
          const nested = w.text.slice(eq + 1);
          if (ancestors.includes(nested)) {
            throw new UsageError(`Config expansion has a cycle: config value ${nested} expands to itself, see inheritance chain [${ancestors.join(', ')}]`);
          }
          for (const e of definitionOf(nested, [...ancestors, nested], ignored)) out.push(e);
        }
      }
    }
    if (!found) throw new UsageError(`Config value '${name}' is not defined in any .rc file`);
    return out;
  };
  const expandConfig = (name: string): string[] => {
    const ignored: string[] = [];
    const out = definitionOf(name, [name], ignored);
    if (ignored.length > 0) notes.push(`Ignored as unsupported by '${command}': ${ignored.join(' ')}`);
    return out;
  };

  const configured: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!.text;
    if (w === '--') {
      for (const rest of words.slice(i)) configured.push(rest.text);
      break;
    }
    if (w === '--config' || w.startsWith('--config=')) {
      let name = w.slice('--config='.length);
      if (w === '--config') {
        const next = words[++i];
        if (next === undefined) throw new UsageError('Expected value after --config');
        name = next.text;
      }
      for (const e of expandConfig(name)) configured.push(e);
    } else configured.push(w);
  }
  // --announce_rc and --enable_platform_specific_config may come from anywhere, configs included; the last one wins.
  const expanded: string[] = [];
  let announce = false;
  let platformConfig = false;
  let platformAt = -1;
  for (let i = 0; i < configured.length; i++) {
    const w = configured[i]!;
    if (w === '--') {
      for (const rest of configured.slice(i)) expanded.push(rest);
      break;
    }
    const announceValue = booleanOption(w, 'announce_rc');
    const platformValue = booleanOption(w, 'enable_platform_specific_config');
    if (announceValue !== undefined) announce = announceValue;
    else if (platformValue !== undefined) {
      platformConfig = platformValue;
      platformAt = expanded.length;
    } else expanded.push(w);
  }
  if (platformConfig && chain.some((key) => chunksOf(`${key}:${settings.platform}`).length > 0)) {
    const platformWords = expandConfig(settings.platform).filter(
      (w) => booleanOption(w, 'announce_rc') === undefined && booleanOption(w, 'enable_platform_specific_config') === undefined,
    );
    expanded.splice(platformAt, 0, ...platformWords);
  }
  const repeated = [...new Set(configsExpanded.filter((c, i) => configsExpanded.indexOf(c) !== i))];
  if (repeated.length > 0) {
    warnings.push(
      `The following configs were expanded more than once: [${repeated.join(', ')}]. For repeatable flags, repeats are counted twice and may lead to unexpected behavior.`,
    );
  }
  return { args: expanded, notes, warnings, announce };
}

/** The value of `--name`, `--noname` or `--name=bool`; undefined when `word` is another option. */
function booleanOption(word: string, name: string): boolean | undefined {
  if (word === `--${name}`) return true;
  if (word === `--no${name}`) return false;
  if (!word.startsWith(`--${name}=`)) return undefined;
  const v = word.slice(name.length + 3).toLowerCase();
  if (['true', 'yes', '1'].includes(v)) return true;
  if (['false', 'no', '0'].includes(v)) return false;
  throw new UsageError(`While parsing option ${word}: '${word.slice(name.length + 3)}' is not a boolean`);
}

function isCommonCommandOption(word: string): boolean {
  const name = word.replace(/^--(no)?/, '').split('=', 1)[0]!;
  return word.startsWith('--') && COMMON_COMMAND_OPTIONS.includes(name);
}

/**
 * By rc key (`build`, `build:ci`): the options in rc order, cut into chunks where the file changes
 * (an import in the middle of a file gives three chunks), as BlazeOptionHandler.structureRcOptionsAndConfigs.
 */
function chunker(rcOptions: readonly RcOption[]): (key: string) => Chunk[] {
  const byKey = new Map<string, Chunk[]>();
  for (const o of rcOptions) {
    if (o.command === 'startup' || o.command.startsWith('startup:')) continue;
    let chunks = byKey.get(o.command);
    if (!chunks) byKey.set(o.command, (chunks = []));
    const last = chunks[chunks.length - 1];
    if (last?.source === o.source) last.options.push(o);
    else chunks.push({ source: o.source, options: [o] });
  }
  return (key) => byKey.get(key) ?? [];
}

/** Words grouped by option: an option word and the words after it that do not start with `-` (its value, when it takes one). */
function optionGroups(options: readonly RcOption[]): RcOption[][] {
  const groups: RcOption[][] = [];
  for (const o of options) {
    const last = groups[groups.length - 1];
    if (last !== undefined && !o.option.startsWith('-') && last[0]!.option.startsWith('-')) last.push(o);
    else groups.push([o]);
  }
  return groups;
}
