import { repr, StarDict, StarList, StarObject, StarTuple, StarlarkError, typeName, type ReprPath, type Value } from '../starlark/index.js';

/** The condition a selector falls back to when none of its other conditions matches. */
export const DEFAULT_CONDITION = '//conditions:default';

/**
 * One `select({...}, no_match_error = ...)`: condition keys with their values, in source order. While
 * BUILD files run, keys are as written and values are Starlark values; on a target (after attribute
 * coercion) keys are canonical labels and values are attribute values.
 */
export class Selector<V = Value> {
  constructor(
    readonly entries: readonly (readonly [condition: string, value: V])[],
    readonly noMatchError: string,
  ) {}
}

/**
 * The value of `select()` and of `+` / `|` expressions involving one: plain parts and selectors in
 * order, unresolved until analysis picks a branch of each in a configuration and concatenates them.
 * The one select type: BUILD files see it as a Starlark value (`SelectorList<Value>`), targets keep it
 * coerced to the attribute's type (`SelectorList<PlainAttrValue>`, made by `map`), and query and
 * analysis read it there. Only a `SelectorList<Value>` is ever handed to Starlark.
 */
export class SelectorList<V = Value> extends StarObject {
  constructor(readonly parts: readonly (Selector<V> | V)[]) {
    super();
  }

  /** The same select with each condition key and each value mapped (attribute coercion, `existing_rule()`). */
  map<W>(value: (v: V) => W, condition: (key: string) => string = (key) => key): SelectorList<W> {
    return new SelectorList(
      this.parts.map((p) =>
        p instanceof Selector
          ? new Selector(
              p.entries.map(([key, v]) => [condition(key), value(v)] as const),
              p.noMatchError,
            )
          : value(p as V),
      ),
    );
  }

  /** For each part, the values it may take: a plain part its own, a selector each branch's. */
  alternatives(): V[][] {
    return this.parts.map((p) => (p instanceof Selector ? p.entries.map(([, v]) => v) : [p as V]));
  }

  /** Every value of every part, plain parts and branches alike, in order. */
  values(): V[] {
    const out: V[] = [];
    for (const choices of this.alternatives()) out.push(...choices);
    return out;
  }

  get type(): string {
    return 'select';
  }
  override hash(): number {
    throw new StarlarkError('unhashable type: select');
  }
  override markFrozen(pending: Value[]): void {
    pending.push(...(this.values() as Value[]));
  }
  override binary(op: string, other: Value, side: 'left' | 'right'): Value | undefined {
    if (op !== '+' && op !== '|') return undefined;
    if (
      !(other instanceof SelectorList) &&
      !(other instanceof StarList) &&
      !(other instanceof StarTuple) &&
      !(other instanceof StarDict) &&
      typeof other !== 'string'
    ) {
      return undefined;
    }
    if (op === '|' && !(other instanceof StarDict || other instanceof SelectorList)) return undefined;
    const otherParts: readonly (Selector<V> | V)[] = other instanceof SelectorList ? (other.parts as readonly (Selector<V> | V)[]) : [other as V];
    return side === 'left' ? new SelectorList([...this.parts, ...otherParts]) : new SelectorList([...otherParts, ...this.parts]);
  }
  /** As Bazel prints it: `[...] + select({...})`; no_match_error is not shown. */
  repr(path: ReprPath): string {
    return this.parts
      .map((p) => {
        if (!(p instanceof Selector)) return repr(p as Value, path);
        const body = p.entries.map(([k, v]) => `${JSON.stringify(k)}: ${repr(v as Value, path)}`).join(', ');
        return `select({${body}})`;
      })
      .join(' + ');
  }
}

/** The `select(x, no_match_error = '')` builtin's work, with Bazel's messages. */
export function makeSelect(x: Value, noMatchError: Value): SelectorList {
  if (!(x instanceof StarDict)) throw new StarlarkError(`select: got ${typeName(x)} for 'x', want dict`);
  if (typeof noMatchError !== 'string') throw new StarlarkError(`select: got ${typeName(noMatchError)} for 'no_match_error', want string`);
  if (x.len() === 0) {
    throw new StarlarkError('select({}) with an empty dictionary can never resolve because it includes no conditions to match');
  }
  const entries: [string, Value][] = [];
  for (const k of x.iterate()) {
    if (typeof k !== 'string') throw new StarlarkError(`select: invalid key: ${repr(k)}. select keys must be label references`);
    entries.push([k, x.get(k)!]);
  }
  return new SelectorList([new Selector(entries, noMatchError)]);
}
