import { UsageError } from '../../core/index.js';
import { Label, LabelSyntaxError } from '../../loading/index.js';
import { type OptionOccurrence, type OptionRegistry, OptionsParser, type UnregisteredOption } from '../../core/options/index.js';
import { BUILD_OPTIONS } from './build-option-registry.js';
import { BuildOptions, type UserFlagSetting } from './build-options.js';

/** What a command line holds: the options, and the other words (target patterns) in order. */
export interface ParsedBuildCommandLine {
  readonly options: BuildOptions;
  readonly residue: readonly string[];
  /** Each option as given, in order (the build event stream's structured command line). */
  readonly occurrences: readonly OptionOccurrence[];
  /** One line per accepted option that has no effect in Kiln (see OptionDefinition.notImplemented). */
  readonly warnings: readonly string[];
}

/**
 * The one options parser (core/options) over the build options' table, taking besides Bazel's
 * user-defined flags: `--//pkg:flag[=value]`, `--no//pkg:flag` and `--@repo//pkg:flag`.
 */
export class BuildOptionsParser {
  private readonly parser: OptionsParser;
  private readonly userFlags = new Map<string, UserFlagSetting>();

  constructor(registry: OptionRegistry = BUILD_OPTIONS) {
    this.parser = new OptionsParser(registry, (option) => this.takeUserFlag(option));
  }

  parse(args: readonly string[]): this {
    this.parser.parse(args);
    return this;
  }

  result(): ParsedBuildCommandLine {
    const { values, residue, occurrences, warnings } = this.parser.result();
    return { options: new BuildOptions(values.registry, values.explicitValues(), new Map(this.userFlags)), residue, occurrences, warnings };
  }

  private takeUserFlag({ arg, name, inlineValue, next, residueIndex }: UnregisteredOption): boolean {
    if (name.startsWith('//') || name.startsWith('@')) {
      const followed = inlineValue === undefined && next !== undefined && !next.startsWith('-');
      this.setUserFlag(arg, name, inlineValue, false, followed ? residueIndex : undefined);
      return true;
    }
    if (name.startsWith('no//') || name.startsWith('no@')) {
      if (inlineValue !== undefined) throw new UsageError(`Unexpected value after boolean option: ${arg}`);
      this.setUserFlag(arg, name.slice(2), undefined, true);
      return true;
    }
    return false;
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
  return { ...parsed, options: parsed.options.withUserFlags(flags), residue: parsed.residue.filter((_, i) => !consumed.has(i)) };
}

/** Parses one list of words with the default registry. */
export function parseBuildOptions(args: readonly string[], registry: OptionRegistry = BUILD_OPTIONS): ParsedBuildCommandLine {
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
