import { UsageError } from '../errors.js';
import { convertOccurrence, type OptionDefinition, OptionValueError, type OptionValue, sameOptionValue } from './option-definition.js';
import type { OptionRegistry } from './option-registry.js';
import { OptionValues } from './option-values.js';

/** One option as it was given, in command-line order (a repeated option occurs several times). */
export interface OptionOccurrence {
  readonly name: string;
  /** This occurrence's converted value (for a list option, the items it adds). */
  readonly value: OptionValue;
  /** As the user wrote it (`-c opt`, `--jobs=4`), for messages. */
  readonly written: string;
}

/** What a command line holds: the options, and the other words (target patterns, a query, files) in order. */
export interface ParsedOptions {
  readonly values: OptionValues;
  readonly residue: readonly string[];
  readonly occurrences: readonly OptionOccurrence[];
  /** One line per accepted option that has no effect in Kiln (see OptionDefinition.notImplemented). */
  readonly warnings: readonly string[];
}

/** A `--name` word the table does not have, for an {@link UnregisteredOptionHandler}. */
export interface UnregisteredOption {
  readonly arg: string;
  readonly name: string;
  readonly inlineValue: string | undefined;
  /** The word after it, if any. */
  readonly next: string | undefined;
  /** How many residue words precede it (the index the next word would get). */
  readonly residueIndex: number;
}

/** Takes a word the table does not have: true when it did (the word alone is consumed); false reports it as unrecognized. */
export type UnregisteredOptionHandler = (option: UnregisteredOption) => boolean;

/**
 * Kiln's one options parser, for every command's table (Bazel's OptionsParser). Feed several
 * sources in order (rc file lines first, then the command line): a later value of a single-valued
 * option wins, repeatable options accumulate across sources.
 *
 * Accepted forms: `--name=value`, `--name value`, `--name` / `--noname` / `--name=false|no|0`
 * for booleans (and tri-states), `-c opt` (a one-letter abbreviation takes the next word), `--`
 * ends the options. Every malformed word is a {@link UsageError} with Bazel's wording. A handler
 * may take words the table does not name (the build options' `--//pkg:flag`).
 */
export class OptionsParser {
  private readonly explicit = new Map<string, OptionValue>();
  private readonly residue: string[] = [];
  private readonly occurrences: OptionOccurrence[] = [];
  /** By option name, so that an option repeated in rc files and on the command line warns once. */
  private readonly warnings = new Map<string, string>();

  constructor(
    readonly registry: OptionRegistry,
    private readonly unregistered: UnregisteredOptionHandler = () => false,
  ) {}

  parse(args: readonly string[]): this {
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]!;
      if (arg === '--') {
        for (const a of args.slice(i + 1)) this.residue.push(a);
        break;
      }
      if (arg.startsWith('--')) {
        i = this.parseLong(arg, args, i);
      } else if (arg.startsWith('-') && arg.length > 1) {
        i = this.parseShort(arg, args, i);
      } else {
        this.residue.push(arg);
      }
    }
    return this;
  }

  result(): ParsedOptions {
    return {
      values: new OptionValues(this.registry, new Map(this.explicit)),
      residue: [...this.residue],
      occurrences: [...this.occurrences],
      warnings: [...this.warnings.values()],
    };
  }

  /** Returns the index of the last word consumed. */
  private parseLong(arg: string, args: readonly string[], i: number): number {
    const body = arg.slice(2);
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const inlineValue = eq < 0 ? undefined : body.slice(eq + 1);

    const def = this.registry.get(name);
    if (def) {
      if (inlineValue === undefined && takesNoValue(def)) {
        this.set(def, def.type === 'bool' ? true : 'yes', arg);
        return i;
      }
      if (inlineValue !== undefined) {
        this.setText(def, inlineValue, arg);
        return i;
      }
      if (i + 1 >= args.length) throw new UsageError(`Expected value after ${arg}`);
      this.setText(def, args[i + 1]!, `${arg} ${args[i + 1]!}`);
      return i + 1;
    }

    if (this.unregistered({ arg, name, inlineValue, next: args[i + 1], residueIndex: this.residue.length })) return i;

    if (name.startsWith('no')) {
      const positive = this.registry.get(name.slice(2));
      if (positive) {
        if (!takesNoValue(positive)) throw new UsageError(`Illegal use of 'no' prefix on non-boolean option: ${arg}`);
        if (inlineValue !== undefined) throw new UsageError(`Unexpected value after boolean option: ${arg}`);
        this.set(positive, positive.type === 'bool' ? false : 'no', arg);
        return i;
      }
    }
    throw new UsageError(`Unrecognized option: ${arg}`);
  }

  private parseShort(arg: string, args: readonly string[], i: number): number {
    if (arg.length !== 2) throw new UsageError(`Invalid options syntax: ${arg}`);
    const def = this.registry.byAbbreviation(arg[1]!);
    if (!def) throw new UsageError(`Unrecognized option: ${arg}`);
    if (takesNoValue(def)) {
      this.set(def, def.type === 'bool' ? true : 'yes', arg);
      return i;
    }
    if (i + 1 >= args.length) throw new UsageError(`Expected value after ${arg}`);
    this.setText(def, args[i + 1]!, `${arg} ${args[i + 1]!}`);
    return i + 1;
  }

  /** `written` is the option as the user wrote it, for Bazel's `While parsing option` prefix. */
  private setText(def: OptionDefinition, text: string, written: string): void {
    let value: OptionValue;
    try {
      value = convertOccurrence(def, text);
    } catch (e) {
      if (e instanceof OptionValueError) throw new UsageError(`While parsing option ${written}: ${e.message}`, undefined, { cause: e });
      throw e;
    }
    this.set(def, value, written);
  }

  private set(def: OptionDefinition, value: OptionValue, written: string): void {
    // Setting an unimplemented option back to its default (an rc file clearing it) changes nothing.
    if (def.notImplemented && !sameOptionValue(value, def.type === 'list' ? [] : def.default)) {
      const message = `${written}: ${def.notImplemented.reason}`;
      if (def.notImplemented.severity === 'error') throw new UsageError(message);
      if (!this.warnings.has(def.name)) this.warnings.set(def.name, `${message}; ignored`);
    }
    this.occurrences.push({ name: def.name, value, written });
    if (def.type === 'list' && def.allowMultiple) {
      const before = (this.explicit.get(def.name) as readonly string[] | undefined) ?? [];
      this.explicit.set(def.name, [...before, ...(value as readonly string[])]);
    } else {
      this.explicit.set(def.name, value);
    }
  }
}

/** Booleans and tri-states: `--name` alone sets them, `--noname` clears them. */
function takesNoValue(def: OptionDefinition): boolean {
  return def.type === 'bool' || (def.type === 'string' && def.triState === true);
}

/** Parses one list of words with one table. */
export function parseOptions(registry: OptionRegistry, args: readonly string[]): ParsedOptions {
  return new OptionsParser(registry).parse(args).result();
}
