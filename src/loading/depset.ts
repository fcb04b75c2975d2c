import {
  Builtin,
  None,
  repr,
  StarDict,
  StarList,
  StarObject,
  StarTuple,
  StarlarkError,
  typeName,
  unpackArgs,
  type ReprPath,
  type Value,
} from '../starlark/index.js';

/** Bazel's depset orders; `default` is compatible with every other. */
export type DepsetOrder = 'default' | 'postorder' | 'preorder' | 'topological';

const ORDERS: readonly DepsetOrder[] = ['default', 'postorder', 'preorder', 'topological'];

/**
 * Bazel's depset: a DAG of direct elements and transitive depsets. Construction never flattens
 * (cost O(direct + transitive)); `to_list()` walks the DAG once, each node at most once, and keeps
 * the result, so a depset shared by many targets is flattened only where it is asked for.
 */
export class Depset extends StarObject {
  private flattened: readonly Value[] | undefined;

  private constructor(
    readonly order: DepsetOrder,
    readonly direct: readonly Value[],
    readonly transitive: readonly Depset[],
    /** The type of its elements (Bazel forbids mixing), or undefined while it is empty. */
    readonly elementType: string | undefined,
  ) {
    super();
  }

  static readonly EMPTY = new Depset('default', [], [], undefined);

  /**
   * Checks elements and orders as Bazel does: elements hashable and immutable, all of one type;
   * every transitive depset's order is `default` or this order.
   */
  static of(order: DepsetOrder, direct: readonly Value[], transitive: readonly Depset[]): Depset {
    let elementType: string | undefined;
    const note = (t: string | undefined) => {
      if (t === undefined) return;
      if (elementType !== undefined && elementType !== t) throw new StarlarkError(`cannot add an item of type '${t}' to a depset of '${elementType}'`);
      elementType = t;
    };
    for (const e of direct) {
      if (e instanceof StarList || e instanceof StarDict) throw new StarlarkError(`depset elements must not be mutable values`);
      if (typeof e === 'object') e.hash(); // unhashable values fail here, in the value's own words
      note(typeName(e));
    }
    const children: Depset[] = [];
    for (const t of transitive) {
      if (t.order !== 'default' && order !== 'default' && t.order !== order) {
        throw new StarlarkError(`Order '${order}' is incompatible with order '${t.order}'`);
      }
      if (t.isEmpty()) continue;
      note(t.elementType);
      children.push(t);
    }
    // A depset of exactly one other adds nothing: share it (Bazel does the same).
    if (direct.length === 0 && children.length === 1 && (children[0]!.order === order || order === 'default')) return children[0]!;
    if (direct.length === 0 && children.length === 0 && order === 'default') return Depset.EMPTY;
    return new Depset(order, direct, children, elementType);
  }

  get type(): string {
    return 'depset';
  }

  isEmpty(): boolean {
    return this.direct.length === 0 && this.transitive.length === 0;
  }

  override truth(): boolean {
    return !this.isEmpty();
  }

  override hash(): number {
    throw new StarlarkError('unhashable type: depset');
  }

  override markFrozen(): void {}

  /** The elements in this depset's order, without duplicates (the first occurrence wins). */
  toList(): readonly Value[] {
    if (this.flattened) return this.flattened;
    // One element and no children (a rule's `depset([out])`): nothing to walk or de-duplicate.
    if (this.transitive.length === 0 && this.direct.length < 2) return (this.flattened = this.direct);
    const seen = new StarDict();
    const out: Value[] = [];
    const add = (v: Value) => {
      if (seen.table.has(v)) return;
      seen.set(v, None);
      out.push(v);
    };
    // Iterative walks (a chain of depsets can be as deep as the dependency graph), each node once.
    const visited = new Set<Depset>([this]);
    const stack: [Depset, number][] = [[this, 0]];
    const reversed = this.order === 'topological';
    const pre = this.order === 'preorder';
    if (pre) this.direct.forEach(add);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const [node, next] = top;
      const n = node.transitive.length;
      if (next < n) {
        top[1]++;
        // Bazel's link order: a post-order walk with children and elements right to left, reversed.
        const child = node.transitive[reversed ? n - 1 - next : next]!;
        if (visited.has(child)) continue;
        visited.add(child);
        if (pre) child.direct.forEach(add);
        stack.push([child, 0]);
        continue;
      }
      stack.pop();
      if (pre) continue;
      if (reversed) for (let i = node.direct.length - 1; i >= 0; i--) add(node.direct[i]!);
      else node.direct.forEach(add);
    }
    if (reversed) out.reverse();
    this.flattened = out;
    return out;
  }

  override attr(name: string): Value | undefined {
    if (name === 'to_list') {
      return new Builtin('to_list', (_t, args, kwargs) => {
        unpackArgs('to_list', args, kwargs, []);
        return new StarList([...this.toList()]);
      });
    }
    return undefined;
  }

  override attrNames(): string[] {
    return ['to_list'];
  }

  repr(path: ReprPath): string {
    const elems = `[${this.toList()
      .map((e) => repr(e, path))
      .join(', ')}]`;
    return this.order === 'default' ? `depset(${elems})` : `depset(${elems}, order = "${this.order}")`;
  }
}

function sequence(fn: string, param: string, v: Value | undefined): readonly Value[] {
  if (v === undefined || v === None) return [];
  if (v instanceof StarList || v instanceof StarTuple) return v.elems;
  throw new StarlarkError(`${fn}: for parameter ${param}: got ${typeName(v)}, want sequence or None`);
}

/** `depset(direct = None, order = "default", *, transitive = None)`. */
export const depsetBuiltin = new Builtin('depset', (_t, args, kwargs) => {
  const [direct, order, transitive] = unpackArgs('depset', args, kwargs, ['direct?', 'order?', 'transitive?']);
  const orderName = order === undefined ? 'default' : order;
  if (typeof orderName !== 'string' || !ORDERS.includes(orderName as DepsetOrder)) {
    throw new StarlarkError(`Invalid order: ${typeof orderName === 'string' ? orderName : repr(orderName)}`);
  }
  const children = sequence('depset', 'transitive', transitive).map((t, i) => {
    if (!(t instanceof Depset)) throw new StarlarkError(`depset: for parameter transitive: at index ${i}, got ${typeName(t)}, want depset`);
    return t;
  });
  return Depset.of(orderName as DepsetOrder, [...sequence('depset', 'direct', direct)], children);
});

/** A depset of the given values, in default order (for values built by the embedder). */
export function depsetOf(values: readonly Value[], transitive: readonly Depset[] = []): Depset {
  return Depset.of('default', values, transitive);
}
