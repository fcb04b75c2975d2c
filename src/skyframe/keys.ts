/**
 * A family of keys that one function computes (Bazel's SkyFunctionName), with the codec of its
 * argument: keys are typed values, and the text form exists only to index memo tables and the store.
 */
export class SkyFamily<A, V> {
  /** The value type, for inference only (never set). */
  declare readonly valueType?: V;

  constructor(
    readonly name: string,
    private readonly codec: { encode(argument: A): string; decode(text: string): A },
  ) {
    if (name.includes(':')) throw new Error(`skyframe: a family name has no ':' (${name})`);
  }

  /** A family whose argument is a string already. */
  static ofStrings<V>(name: string): SkyFamily<string, V> {
    return new SkyFamily<string, V>(name, { encode: (s) => s, decode: (s) => s });
  }

  key(argument: A): SkyKey<A, V> {
    return new SkyKey(this, argument, `${this.name}:${this.codec.encode(argument)}`);
  }

  /** The key a stored id names (`name:argument`), or undefined for another family's id. */
  keyOfId(id: string): SkyKey<A, V> | undefined {
    if (!id.startsWith(`${this.name}:`)) return undefined;
    return new SkyKey(this, this.codec.decode(id.slice(this.name.length + 1)), id);
  }
}

/** One key: its family, its argument, and the id memo tables and stores index it by. */
export class SkyKey<A = unknown, V = unknown> {
  constructor(
    readonly family: SkyFamily<A, V>,
    readonly argument: A,
    readonly id: string,
  ) {}

  toString(): string {
    return this.id;
  }
}
