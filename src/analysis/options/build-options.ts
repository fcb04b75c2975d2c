import { type OptionRegistry, type OptionValue, OptionValues, sameOptionValue } from '../../core/options/index.js';

/**
 * One user-defined flag as written (`--//pkg:flag=value`, `--//pkg:flag`, `--no//pkg:flag`).
 * Its type is known only once loading has read the build setting, so the text stays raw here;
 * see user-defined-flag.ts for the conversion.
 */
export interface UserFlagSetting {
  /** The flag's label as written after the dashes, canonicalised (`//pkg` becomes `//pkg:pkg`). */
  readonly label: string;
  /** The text after `=`, or undefined for the bare and the `no` forms. */
  readonly value: string | undefined;
  readonly negated: boolean;
  /**
   * For the bare form followed by a non-option word: that word's index in the residue. Bazel takes
   * it as the value when the setting is not a boolean (`--//pkg:flag blue`); see bindUserFlagValues.
   */
  readonly nextResidueIndex?: number;
  /**
   * A value a configuration transition set (already of the setting's type): taken as it is, and
   * allowed for settings that are not flags (`flag = False`), as Bazel's transitions may set them.
   */
  readonly transitioned?: readonly [unknown];
}

/**
 * The build options of one configuration: the values set explicitly (on the command line or in
 * an rc file) over the registry's defaults, plus the user-defined flags. Immutable; `with` derives.
 */
export class BuildOptions extends OptionValues {
  private fingerprintCache: string | undefined;

  constructor(
    registry: OptionRegistry,
    explicit: ReadonlyMap<string, OptionValue>,
    readonly userFlags: ReadonlyMap<string, UserFlagSetting> = new Map(),
  ) {
    super(registry, explicit);
  }

  /** `--define` as a map; for a repeated name the later value wins, as in Bazel. */
  defines(): Map<string, string> {
    const out = new Map<string, string>();
    for (const entry of this.getList('define')) {
      const eq = entry.indexOf('=');
      out.set(entry.slice(0, eq), entry.slice(eq + 1));
    }
    return out;
  }

  /** New options with some values replaced (used to derive the exec configuration). */
  with(overrides: Readonly<Record<string, OptionValue>>): BuildOptions {
    const next = new Map(this.explicit);
    for (const [name, value] of Object.entries(overrides)) {
      this.definition(name);
      next.set(name, value);
    }
    return new BuildOptions(this.registry, next, this.userFlags);
  }

  /** New options with the user-defined flags replaced. */
  withUserFlags(flags: ReadonlyMap<string, UserFlagSetting>): BuildOptions {
    return new BuildOptions(this.registry, this.explicit, flags);
  }

  /**
   * A canonical text of every value that differs from its default, sorted by name, leaving out the
   * execution-only options: equal configurations give equal text regardless of how the options
   * were written or of `--jobs` and the like. Configuration ids and analysis caches key on it.
   */
  fingerprint(): string {
    return (this.fingerprintCache ??= this.canonicalText(false));
  }

  /** As fingerprint(), with the execution-only options too: equal text, equal command in every respect. */
  fullFingerprint(): string {
    return this.canonicalText(true);
  }

  /**
   * Every explicitly set option in canonical form, as Bazel's canonical command line lists them:
   * `--name=value`, a boolean as `--name` or `--noname`, a repeated option once per value; then
   * the user-defined flags.
   */
  canonicalForms(): string[] {
    const out: string[] = [];
    for (const [name, value] of this.explicit) {
      if (typeof value === 'boolean') out.push(value ? `--${name}` : `--no${name}`);
      else if (Array.isArray(value)) {
        const def = this.definition(name);
        if (def.type === 'list' && def.allowMultiple) for (const v of value as readonly string[]) out.push(`--${name}=${v}`);
        else out.push(`--${name}=${(value as readonly string[]).join(',')}`);
      } else out.push(`--${name}=${String(value)}`);
    }
    for (const flag of this.userFlags.values()) out.push(`--${flag.negated ? 'no' : ''}${flag.label}${flag.value === undefined ? '' : `=${flag.value}`}`);
    return out;
  }

  private canonicalText(withExecutionOnly: boolean): string {
    const parts: string[] = [];
    for (const name of [...this.explicit.keys()].sort()) {
      const value = this.explicit.get(name)!;
      const def = this.definition(name);
      if ((def.executionOnly && !withExecutionOnly) || sameOptionValue(value, def.default)) continue;
      parts.push(`--${name}=${JSON.stringify(value)}`);
    }
    for (const label of [...this.userFlags.keys()].sort()) {
      const flag = this.userFlags.get(label)!;
      if (flag.transitioned) {
        parts.push(`--${label}:=${JSON.stringify(flag.transitioned[0])}`);
        continue;
      }
      parts.push(`--${flag.negated ? 'no' : ''}${label}${flag.value === undefined ? '' : `=${JSON.stringify(flag.value)}`}`);
    }
    return parts.join(' ');
  }
}
