import { repr, StarDict, StarList, StarObject, StarTuple, StarlarkError, type ReprPath, type Value } from '../starlark/index.js';

/** One `select({...})` call's dictionary (frozen) and its no_match_error. */
export class Selector {
  constructor(
    readonly entries: readonly (readonly [string, Value])[],
    readonly noMatchError: string,
  ) {}
}

/**
 * The value of `select()` and of `+` / `|` expressions involving one: the parts stay unresolved
 * until analysis picks a branch with the configuration.
 */
export class SelectorList extends StarObject {
  constructor(readonly parts: readonly (Selector | Value)[]) {
    super();
  }
  get type(): string {
    return 'select';
  }
  override hash(): number {
    throw new StarlarkError('unhashable type: select');
  }
  override markFrozen(pending: Value[]): void {
    for (const p of this.parts)
      if (!(p instanceof Selector)) pending.push(p);
      else for (const [, v] of p.entries) pending.push(v);
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
    const otherParts = other instanceof SelectorList ? other.parts : [other];
    return side === 'left' ? new SelectorList([...this.parts, ...otherParts]) : new SelectorList([...otherParts, ...this.parts]);
  }
  repr(path: ReprPath): string {
    return this.parts
      .map((p) => {
        if (!(p instanceof Selector)) return repr(p, path);
        const body = p.entries.map(([k, v]) => `${JSON.stringify(k)}: ${repr(v, path)}`).join(', ');
        return `select({${body}})`;
      })
      .join(' + ');
  }
}

/** The `select(x, no_match_error = '')` builtin's work, with Bazel's messages. */
export function makeSelect(x: Value, noMatchError: Value): SelectorList {
  if (!(x instanceof StarDict)) throw new StarlarkError(`select: got ${typeOf(x)} for 'x', want dict`);
  if (typeof noMatchError !== 'string') throw new StarlarkError(`select: got ${typeOf(noMatchError)} for 'no_match_error', want string`);
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

function typeOf(v: Value): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number' || typeof v === 'bigint') return 'int';
  return v.type;
}
