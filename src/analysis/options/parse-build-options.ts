import { UsageError } from '../../core/index.js';
import { Label, LabelSyntaxError } from '../../loading/index.js';
import { BUILD_OPTIONS, type BuildOptionRegistry } from './build-option-registry.js';
import { BuildOptions, sameOptionValue, type UserFlagSetting } from './build-options.js';
import { convertOccurrence, OptionValueError, type OptionDefinition, type OptionValue } from './option-definition.js';

/** What a command line holds: the options, and the other words (target patterns) in order. */
export interface ParsedBuildCommandLine {
  readonly options: BuildOptions;
  readonly residue: readonly string[];
  /** One line per accepted option that has no effect in Kiln (see OptionDefinition.notImplemented). */
  readonly warnings: readonly string[];
}

/**
 * Reads command-line words the way Bazel's options parser does. Feed several sources in order
 * (rc file lines first, then the command line): a later value of a single-valued option wins,
 * repeatable options accumulate across sources.
 *
 * Accepted forms: `--name=value`, `--name value`, `--name` / `--noname` / `--name=false|no|0`
 * for booleans, `-c opt` (a one-letter abbreviation takes the next word), `--` ends the options,
 * `--//pkg:flag[=value]`, `--no//pkg:flag` and `--@repo//pkg:flag` for user-defined flags.
 * Every malformed word is a {@link UsageError} with Bazel's wording.
 */
export class BuildOptionsParser {
  private readonly explicit = new Map<string, OptionValue>();
  private readonly userFlags = new Map<string, UserFlagSetting>();
  private readonly residue: string[] = [];
  /** By option name, so that an option repeated in rc files and on the command line warns once. */
  private readonly warnings = new Map<string, string>();

  constructor(private readonly registry: BuildOptionRegistry = BUILD_OPTIONS) {}

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

  result(): ParsedBuildCommandLine {
    return {
      options: new BuildOptions(this.registry, new Map(this.explicit), new Map(this.userFlags)),
      residue: [...this.residue],
      warnings: [...this.warnings.values()],
    };
  }

  /** Returns the index of the last word consumed. */
  private parseLong(arg: string, args: readonly string[], i: number): number {
    const body = arg.slice(2);
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const inlineValue = eq < 0 ? undefined : body.slice(eq + 1);

    if (name.startsWith('//') || name.startsWith('@')) {
      const next = args[i + 1];
      const followed = inlineValue === undefined && next !== undefined && !next.startsWith('-');
      this.setUserFlag(arg, name, inlineValue, false, followed ? this.residue.length : undefined);
      return i;
    }
    if (name.startsWith('no//') || name.startsWith('no@')) {
      if (inlineValue !== undefined) throw new UsageError(`Unexpected value after boolean option: ${arg}`);
      this.setUserFlag(arg, name.slice(2), undefined, true);
      return i;
    }

    const def = this.registry.get(name);
    if (def?.internal) throw new UsageError(`Unrecognized option: ${arg}`);
    if (def) {
      if (def.type === 'bool' && inlineValue === undefined) {
        this.set(def, true, arg);
        return i;
      }
      if (def.type === 'string' && def.triState && inlineValue === undefined) {
        this.set(def, 'yes', arg);
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

    if (name.startsWith('no')) {
      const positive = this.registry.get(name.slice(2));
      if (positive && !positive.internal) {
        const triState = positive.type === 'string' && positive.triState === true;
        if (positive.type !== 'bool' && !triState) throw new UsageError(`Illegal use of 'no' prefix on non-boolean option: ${arg}`);
        if (inlineValue !== undefined) throw new UsageError(`Unexpected value after boolean option: ${arg}`);
        this.set(positive, triState ? 'no' : false, arg);
        return i;
      }
    }
    throw new UsageError(`Unrecognized option: ${arg}`);
  }

  private parseShort(arg: string, args: readonly string[], i: number): number {
    if (arg.length !== 2) throw new UsageError(`Invalid options syntax: ${arg}`);
    const def = this.registry.byAbbreviation(arg[1]!);
    if (!def) throw new UsageError(`Unrecognized option: ${arg}`);
    if (def.type === 'bool') {
      this.set(def, true, arg);
      return i;
    }
    if (def.type === 'string' && def.triState) {
      this.set(def, 'yes', arg);
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
    if (def.type === 'list' && def.allowMultiple) {
      const before = (this.explicit.get(def.name) as readonly string[] | undefined) ?? [];
      this.explicit.set(def.name, [...before, ...(value as readonly string[])]);
    } else {
      this.explicit.set(def.name, value);
    }
  }

  private setUserFlag(arg: string, rawLabel: string, value: string | undefined, negated: boolean, nextResidueIndex?: number): void {
    const label = canonicalFlagLabel(rawLabel);
    if (label === undefined) throw new UsageError(`Unrecognized option: ${arg}`);
    this.userFlags.set(label, nextResidueIndex === undefined ? { label, value, negated } : { label, value, negated, nextResidueIndex });
  }
}

/**
 * Once loading knows the build settings' types: a bare non-boolean user-defined flag takes the
 * word after it as its value, as Bazel's Starlark options parser does (`--//pkg:flag blue`), and
 * that word leaves the residue. Flags whose setting is unknown are left for userFlagValue to report.
 */
export function bindUserFlagValues(parsed: ParsedBuildCommandLine, typeOf: (label: string) => string | undefined): ParsedBuildCommandLine {
  const consumed = new Set<number>();
  const flags = new Map<string, UserFlagSetting>();
  for (const [label, flag] of parsed.options.userFlags) {
    const type = typeOf(label);
    if (flag.value === undefined && !flag.negated && flag.nextResidueIndex !== undefined && type !== undefined && type !== 'bool') {
      consumed.add(flag.nextResidueIndex);
      flags.set(label, { label, value: parsed.residue[flag.nextResidueIndex], negated: false });
    } else {
      flags.set(label, { label, value: flag.value, negated: flag.negated });
    }
  }
  return { options: parsed.options.withUserFlags(flags), residue: parsed.residue.filter((_, i) => !consumed.has(i)), warnings: parsed.warnings };
}

/** Parses one list of words with the default registry. */
export function parseBuildOptions(args: readonly string[], registry: BuildOptionRegistry = BUILD_OPTIONS): ParsedBuildCommandLine {
  return new BuildOptionsParser(registry).parse(args).result();
}

/**
 * `//pkg` → `//pkg:pkg`, `@repo//pkg:name` kept, `@repo` → `@repo//:repo`; undefined when the
 * text is not an absolute label.
 */
export function canonicalFlagLabel(raw: string): string | undefined {
  try {
    // Without a package context only absolute labels parse.
    return Label.parse(raw).toString();
  } catch (e) {
    if (e instanceof LabelSyntaxError) return undefined;
    throw e;
  }
}
