import { UsageError } from '../core/index.js';
import { type OptionDefinition, type OptionOccurrence, OptionRegistry, optionsHelp, type ParsedOptions, parseOptions } from '../core/options/index.js';

/** A titled part of a command's options (cquery: its own, then the build options). */
export interface OptionGroup {
  readonly title: string;
  readonly definitions: Iterable<OptionDefinition>;
}

/**
 * A command's own table for the one option parser: what its `--help` and `kiln help COMMAND`
 * print (the usage text, then each group in Bazel's `help` layout) and what it parses.
 */
export class CommandOptions {
  readonly registry: OptionRegistry;

  constructor(
    readonly usage: string,
    readonly groups: readonly OptionGroup[],
  ) {
    this.registry = new OptionRegistry(groups.flatMap((g) => [...g.definitions]));
  }

  parse(args: readonly string[]): ParsedOptions {
    return parseOptions(this.registry, args);
  }

  help(): string {
    return `${this.usage}${this.groups.map((g) => `\n${g.title}:\n${optionsHelp(g.definitions)}`).join('')}`;
  }
}

/** A string option of a server role's command (its value checked where its config file's is). */
export function textOption(name: string, help: string): OptionDefinition {
  return { name, type: 'string', default: '', help };
}

/** A repeatable string option. */
export function repeatedOption(name: string, help: string): OptionDefinition {
  return { name, type: 'list', default: [], allowMultiple: true, converter: 'whole', help };
}

/** An integer option within [min, max], checked with Bazel's range wording. */
export function intOption(name: string, help: string, min: number, max: number, fallback = min): OptionDefinition {
  return { name, type: 'int', default: fallback, min, max, help };
}

/** A boolean option (`--name`, `--noname`). */
export function boolOption(name: string, help: string): OptionDefinition {
  return { name, type: 'bool', default: false, help };
}

/** Each given option's values as text, in order: what a role's config resolution reads beside its config file. */
export function givenTexts(occurrences: readonly OptionOccurrence[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const { name, value } of occurrences) {
    const texts = Array.isArray(value) ? value : [String(value)];
    out.set(name, [...(out.get(name) ?? []), ...(texts as string[])]);
  }
  return out;
}

/** A non-empty value of a text option, or undefined when not given. */
export function nonEmpty(parsed: ParsedOptions, name: string, what: string): string | undefined {
  if (!parsed.values.isSet(name)) return undefined;
  const value = parsed.values.getString(name);
  if (value === '') throw new UsageError(`--${name} expects ${what}`);
  return value;
}
