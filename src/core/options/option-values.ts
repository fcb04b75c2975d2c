import type { OptionDefinition, OptionValue } from './option-definition.js';
import type { OptionRegistry } from './option-registry.js';

/** The values of one table's options: those set explicitly (command line, rc files) over the table's defaults. */
export class OptionValues {
  constructor(
    readonly registry: OptionRegistry,
    protected readonly explicit: ReadonlyMap<string, OptionValue>,
  ) {}

  /** The effective value: the explicit one, else the default. Throws for an unregistered name. */
  get(name: string): OptionValue {
    const value = this.explicit.get(name);
    if (value !== undefined) return value;
    return this.definition(name).default;
  }

  getString(name: string): string {
    const v = this.get(name);
    if (typeof v !== 'string') throw new Error(`option --${name} is not a string option`);
    return v;
  }

  getBool(name: string): boolean {
    const v = this.get(name);
    if (typeof v !== 'boolean') throw new Error(`option --${name} is not a boolean option`);
    return v;
  }

  getInt(name: string): number {
    const v = this.get(name);
    if (typeof v !== 'number') throw new Error(`option --${name} is not an int option`);
    return v;
  }

  /** A duration option's value in milliseconds. */
  getDurationMs(name: string): number {
    if (this.definition(name).type !== 'duration') throw new Error(`option --${name} is not a duration option`);
    return this.getInt(name);
  }

  getList(name: string): readonly string[] {
    const v = this.get(name);
    if (!Array.isArray(v)) throw new Error(`option --${name} is not a list option`);
    return v as readonly string[];
  }

  /** Whether the option was given explicitly. */
  isSet(name: string): boolean {
    return this.explicit.has(name);
  }

  /** The values given explicitly, by option name. */
  explicitValues(): ReadonlyMap<string, OptionValue> {
    return this.explicit;
  }

  definition(name: string): OptionDefinition {
    const def = this.registry.get(name);
    if (!def) throw new Error(`option --${name} is not registered`);
    return def;
  }
}
