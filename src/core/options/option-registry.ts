import type { OptionDefinition } from './option-definition.js';

/**
 * One command's table of options, by full name and by one-letter abbreviation (Bazel's
 * OptionsData). Every command's options come from a table like this, so parsing, `kiln help` and
 * rc-file checks read the same definitions.
 */
export class OptionRegistry {
  private readonly byName = new Map<string, OptionDefinition>();
  private readonly byAbbrev = new Map<string, OptionDefinition>();

  constructor(definitions: readonly OptionDefinition[]) {
    for (const def of definitions) {
      if (this.byName.has(def.name)) throw new Error(`option --${def.name} is registered twice`);
      this.byName.set(def.name, def);
      if (def.abbrev !== undefined) {
        if (this.byAbbrev.has(def.abbrev)) throw new Error(`abbreviation -${def.abbrev} is registered twice`);
        this.byAbbrev.set(def.abbrev, def);
      }
    }
  }

  get(name: string): OptionDefinition | undefined {
    return this.byName.get(name);
  }

  byAbbreviation(letter: string): OptionDefinition | undefined {
    return this.byAbbrev.get(letter);
  }

  names(): IterableIterator<string> {
    return this.byName.keys();
  }

  definitions(): IterableIterator<OptionDefinition> {
    return this.byName.values();
  }

  /** A table with more options (cquery's: the build options and its own). */
  extendedWith(definitions: readonly OptionDefinition[]): OptionRegistry {
    return new OptionRegistry([...this.byName.values(), ...definitions]);
  }
}
