import { KilnError, nodeCrypto } from '../core/index.js';
import type { SkyFamily, SkyKey } from './keys.js';

/** A dependency cycle among keys; `path` starts and ends at the same key. */
export class CycleError extends KilnError {
  constructor(readonly path: readonly SkyKey[]) {
    super(`cycle detected: ${path.join(' -> ')}`);
  }
}

/** What a computation sees: its dependencies, and a way to record the inputs it read. */
export interface Environment {
  /** The value of another key (computed at most once per run); records the dependency. */
  get<A, V>(key: SkyKey<A, V>): V;
  /** Records an input outside the graph (a file's content, a directory listing) and its fingerprint. */
  recordInput(id: string, fingerprint: string): void;
}

/**
 * Computes the values of one key family. `persist` lets values be stored across runs (see
 * PersistentStore); they are reused while every recorded input has the same fingerprint and every
 * persisted key they depend on has a value with the same fingerprint (change pruning: a dependency
 * recomputed to an equal value does not invalidate its dependents). A stored value `decode` rejects
 * (throws) is computed again; a value `encode` rejects is not stored.
 */
export interface SkyFunction<A = unknown, V = unknown> {
  compute(argument: A, env: Environment, key: SkyKey<A, V>): V;
  readonly persist?: { encode(value: V): Uint8Array; decode(data: Uint8Array): V };
}

/** A family with its function, as the evaluator is given them. */
export interface SkyFunctionEntry {
  // biome-ignore lint/suspicious/noExplicitAny: one list holds families of different argument and value types
  readonly family: SkyFamily<any, any>;
  // biome-ignore lint/suspicious/noExplicitAny: see family
  readonly fn: SkyFunction<any, any>;
}

/** `skyFunction(family, fn)`: binds a function to its family with their types checked together. */
export function skyFunction<A, V>(family: SkyFamily<A, V>, fn: SkyFunction<A, V>): SkyFunctionEntry {
  return { family, fn };
}

/** A stored value with what it was computed from. */
export interface PersistedEntry {
  /** Inputs outside the graph it read, itself or through dependencies that are not persisted. */
  readonly inputs: readonly (readonly [string, string])[];
  /** Persisted keys it depended on, by id, with the fingerprint of the value each had. */
  readonly deps: readonly (readonly [string, string])[];
  /** The encoded value; decoded only once every input and dependency is known unchanged. */
  readonly data: Uint8Array;
}

/** Where persisted values live between runs (e.g. a file in the output base). */
export interface PersistentStore {
  get(id: string): PersistedEntry | undefined;
  set(id: string, entry: PersistedEntry): void;
}

/** Answers "what is this input's fingerprint now?" when validating a persisted entry. */
export type InputOracle = (id: string) => string;

interface Node {
  readonly key: SkyKey;
  value?: unknown;
  error?: unknown;
  /** Inputs read by this computation and everything it depended on (what trackInputs reports). */
  readonly inputs: Map<string, string>;
  /** What a stored entry keeps: inputs read here or through dependencies that are not persisted... */
  readonly ownInputs: Map<string, string>;
  /** ...and the persisted dependencies, with their values' fingerprints. */
  readonly deps: Map<string, string>;
  /** A persisted value's encoding, whose fingerprint is taken when first asked for (see fingerprintOfNode). */
  encoded?: Uint8Array | undefined;
  fingerprint?: string;
  /**
   * A persisted family's value that could not be stored (its codec refused it, or it failed), or one
   * that read such a value: what depends on it cannot be stored either, since reusing a dependent
   * would skip the computation of what it read.
   */
  unstorable?: boolean;
  done: boolean;
}

/** Counters for tests and benchmarks. */
export interface EvaluationStats {
  computed: number;
  reusedFromStore: number;
  /** Persisted values computed again that came out equal to the stored one (their dependents stay valid). */
  recomputedUnchanged: number;
}

/** A persisted value's fingerprint, hashed once, when something first compares it (a query that only reuses packages hashes none). */
function fingerprintOfNode(node: Node): string | undefined {
  if (node.fingerprint === undefined && node.encoded !== undefined) {
    node.fingerprint = fingerprintOf(node.encoded);
    node.encoded = undefined;
  }
  return node.fingerprint;
}

function fingerprintOf(data: Uint8Array): string {
  // node:crypto is loaded on first use: a query that reuses nothing persisted never loads it.
  return nodeCrypto().createHash('sha256').update(data).digest('base64url').slice(0, 27);
}

/**
 * A small synchronous incremental evaluator in the spirit of Bazel's Skyframe: values of typed keys
 * are memoised for one run, dependencies are recorded as computations ask for them, a cycle fails
 * with its path, and values of persistent functions are reused across runs while their inputs and
 * their persisted dependencies' values are unchanged.
 */
export class Evaluator {
  private readonly nodes = new Map<string, Node>();
  private readonly inProgress: Node[] = [];
  private readonly functions = new Map<string, SkyFunctionEntry>();
  /** Collects the inputs of every top-level request while set (see trackInputs). */
  private topLevelSink: Map<string, string> | undefined;
  readonly stats: EvaluationStats = { computed: 0, reusedFromStore: 0, recomputedUnchanged: 0 };

  constructor(
    functions: readonly SkyFunctionEntry[],
    private readonly store?: PersistentStore,
    private readonly oracle?: InputOracle,
  ) {
    for (const entry of functions) {
      if (this.functions.has(entry.family.name)) throw new Error(`skyframe: two functions for family ${entry.family.name}`);
      this.functions.set(entry.family.name, entry);
    }
  }

  /** The value of `key`; a computation error is memoised and thrown again on every request. */
  evaluate<A, V>(key: SkyKey<A, V>): V {
    return this.request(key, undefined) as V;
  }

  /**
   * Runs `fn` and returns, with its result, the inputs of every key it evaluated (cached or not):
   * what a value derived outside the graph from those keys depends on. Not reentrant.
   */
  trackInputs<T>(fn: () => T): { value: T; inputs: Map<string, string> } {
    if (this.topLevelSink) throw new Error('skyframe: trackInputs is not reentrant');
    const inputs = new Map<string, string>();
    this.topLevelSink = inputs;
    try {
      return { value: fn(), inputs };
    } finally {
      this.topLevelSink = undefined;
    }
  }

  /** The fingerprint of `key`'s persisted value, evaluating it; undefined when it has none (an error, a value not stored). */
  fingerprintOf(key: SkyKey): string | undefined {
    try {
      this.evaluate(key);
    } catch {
      return undefined;
    }
    const node = this.nodes.get(key.id);
    return node && fingerprintOfNode(node);
  }

  /** Inputs `key` depended on, transitively (after it was evaluated). */
  inputsOf(key: SkyKey): ReadonlyMap<string, string> | undefined {
    return this.nodes.get(key.id)?.inputs;
  }

  private request(key: SkyKey, parent: Node | undefined): unknown {
    const node = this.node(key);
    if (parent) addDependency(parent, node);
    else if (this.topLevelSink) for (const [id, fp] of node.inputs) this.topLevelSink.set(id, fp);
    if (node.error !== undefined) throw node.error;
    return node.value;
  }

  /** The node of `key`, done: memoised, reused from the store, or computed now. */
  private node(key: SkyKey): Node {
    const known = this.nodes.get(key.id);
    if (known) {
      if (!known.done) {
        const start = this.inProgress.indexOf(known);
        throw new CycleError([...this.inProgress.slice(start).map((n) => n.key), key]);
      }
      return known;
    }
    const entry = this.functions.get(key.family.name);
    if (!entry || entry.family !== key.family) throw new Error(`skyframe: no function for key ${key.id}`);
    const node: Node = { key, inputs: new Map(), ownInputs: new Map(), deps: new Map(), done: false };
    this.nodes.set(key.id, node);
    const { fn } = entry;
    this.inProgress.push(node);
    try {
      const stored = fn.persist && this.store && this.oracle ? this.store.get(key.id) : undefined;
      if (stored && this.reuse(fn.persist!, stored, node)) {
        this.stats.reusedFromStore++;
        return node;
      }
      this.compute(fn, node, stored);
      return node;
    } finally {
      this.inProgress.pop();
      node.done = true;
    }
  }

  private compute(fn: SkyFunction, node: Node, stored: PersistedEntry | undefined): void {
    const env: Environment = {
      get: <A, V>(k: SkyKey<A, V>) => this.request(k, node) as V,
      recordInput: (id, fp) => {
        node.inputs.set(id, fp);
        node.ownInputs.set(id, fp);
      },
    };
    try {
      node.value = fn.compute(node.key.argument, env, node.key);
      this.stats.computed++;
    } catch (e) {
      node.error = e ?? new Error(`skyframe: ${node.key.id} failed`);
      if (fn.persist) node.unstorable = true;
      return;
    }
    if (!fn.persist) return;
    if (node.unstorable) return;
    let data: Uint8Array;
    try {
      data = fn.persist.encode(node.value);
    } catch {
      node.unstorable = true; // a value the codec cannot store is only not cached; the run has it
      return;
    }
    node.encoded = data;
    if (stored && fingerprintOf(stored.data) === fingerprintOfNode(node)) this.stats.recomputedUnchanged++;
    this.store?.set(node.key.id, { inputs: [...node.ownInputs], deps: [...node.deps], data });
  }

  /**
   * Takes a stored value when every input it recorded is unchanged and every persisted dependency
   * (reused or computed again now) has the value fingerprint it recorded, and it decodes.
   */
  private reuse(persist: NonNullable<SkyFunction['persist']>, entry: PersistedEntry, node: Node): boolean {
    for (const [id, fp] of entry.inputs) if (this.oracle!(id) !== fp) return false;
    const deps: Node[] = [];
    for (const [id, fp] of entry.deps) {
      const key = this.keyOfId(id);
      if (!key) return false;
      let dep: Node;
      try {
        dep = this.node(key);
      } catch {
        return false; // a cycle through the stored graph: compute, and let the computation say so
      }
      if (fingerprintOfNode(dep) !== fp) return false;
      deps.push(dep);
    }
    try {
      node.value = persist.decode(entry.data);
    } catch {
      return false; // a record this build cannot read: computed again, and stored anew
    }
    for (const [id, fp] of entry.inputs) {
      node.inputs.set(id, fp);
      node.ownInputs.set(id, fp);
    }
    for (const dep of deps) addDependency(node, dep);
    node.encoded = entry.data;
    return true;
  }

  private keyOfId(id: string): SkyKey | undefined {
    const name = id.slice(0, id.indexOf(':'));
    return this.functions.get(name)?.family.keyOfId(id);
  }
}

/** Records that `parent` read `child`: a persisted value by fingerprint, anything else by what it read. */
function addDependency(parent: Node, child: Node): void {
  for (const [id, fp] of child.inputs) parent.inputs.set(id, fp);
  if (child.unstorable) {
    parent.unstorable = true;
    return;
  }
  const fingerprint = fingerprintOfNode(child);
  if (fingerprint !== undefined) {
    parent.deps.set(child.key.id, fingerprint);
    return;
  }
  for (const [id, fp] of child.ownInputs) parent.ownInputs.set(id, fp);
  for (const [id, fp] of child.deps) parent.deps.set(id, fp);
}
