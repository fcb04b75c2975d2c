import { KilnError } from '../core/index.js';

/** A dependency cycle among keys; `path` starts and ends at the same key. */
export class CycleError extends KilnError {
  constructor(readonly path: readonly string[]) {
    super(`cycle detected: ${path.join(' -> ')}`);
  }
}

/** What a computation sees: its dependencies, and a way to record the inputs it read. */
export interface Environment {
  /** The value of another key (computed at most once per run); records the dependency. */
  get<V>(key: string): V;
  /** Records an input outside the graph (a file's content, a directory listing) and its fingerprint. */
  recordInput(id: string, fingerprint: string): void;
}

/**
 * Computes the value of one key family. The key's text after the first ':' is the argument.
 * `persist` lets values be stored across runs (see PersistentStore); they are reused while every
 * recorded input still has the same fingerprint. A stored value `decode` rejects (throws) is computed
 * again; a value `encode` rejects is not stored.
 */
export interface SkyFunction<V = unknown> {
  compute(key: string, env: Environment): V;
  readonly persist?: { encode(value: V): Uint8Array; decode(data: Uint8Array): V };
}

/** A stored value with the inputs it was computed from. */
export interface PersistedEntry {
  readonly inputs: readonly (readonly [string, string])[];
  /** The encoded value; decoded only once every input is known unchanged. */
  readonly data: Uint8Array;
}

/** Where persisted values live between runs (e.g. a file in the output base). */
export interface PersistentStore {
  get(key: string): PersistedEntry | undefined;
  set(key: string, entry: PersistedEntry): void;
}

/** Answers "what is this input's fingerprint now?" when validating a persisted entry. */
export type InputOracle = (id: string) => string;

interface Node {
  value?: unknown;
  error?: unknown;
  /** Inputs read by this computation and everything it depended on. */
  inputs: Map<string, string>;
  done: boolean;
}

/** Counters for tests and benchmarks. */
export interface EvaluationStats {
  computed: number;
  reusedFromStore: number;
}

/**
 * A small synchronous incremental evaluator in the spirit of Bazel's Skyframe: values are memoised
 * for one run, dependencies are recorded as computations ask for them, a cycle fails with its path,
 * and values of persistent functions are reused across runs while their inputs are unchanged.
 */
export class Evaluator {
  private readonly nodes = new Map<string, Node>();
  private readonly inProgress: string[] = [];
  /** Collects the inputs of every top-level request while set (see trackInputs). */
  private topLevelSink: Map<string, string> | undefined;
  readonly stats: EvaluationStats = { computed: 0, reusedFromStore: 0 };

  constructor(
    // biome-ignore lint/suspicious/noExplicitAny: one map holds functions of different value types
    private readonly functions: ReadonlyMap<string, SkyFunction<any>>,
    private readonly store?: PersistentStore,
    private readonly oracle?: InputOracle,
  ) {}

  /** The value of `key`; a computation error is memoised and thrown again on every request. */
  evaluate<V>(key: string): V {
    return this.request<V>(key, undefined);
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

  /** Inputs `key` depended on (after it was evaluated). */
  inputsOf(key: string): ReadonlyMap<string, string> | undefined {
    return this.nodes.get(key)?.inputs;
  }

  private request<V>(key: string, parent: Node | undefined): V {
    let node = this.nodes.get(key);
    if (node === undefined) node = this.compute(key);
    else if (!node.done) {
      const start = this.inProgress.indexOf(key);
      throw new CycleError([...this.inProgress.slice(start), key]);
    }
    const sink = parent?.inputs ?? this.topLevelSink;
    if (sink) for (const [id, fp] of node.inputs) sink.set(id, fp);
    if (node.error !== undefined) throw node.error;
    return node.value as V;
  }

  private compute(key: string): Node {
    const colon = key.indexOf(':');
    const fnName = colon < 0 ? key : key.slice(0, colon);
    const fn = this.functions.get(fnName);
    if (!fn) throw new Error(`skyframe: no function for key ${key}`);
    const node: Node = { inputs: new Map(), done: false };
    this.nodes.set(key, node);

    if (fn.persist && this.store && this.oracle && this.reuse(fn.persist, key, node)) {
      node.done = true;
      this.stats.reusedFromStore++;
      return node;
    }

    const env: Environment = {
      get: <V>(k: string) => this.request<V>(k, node),
      recordInput: (id, fp) => void node.inputs.set(id, fp),
    };
    this.inProgress.push(key);
    try {
      node.value = fn.compute(key, env);
      this.stats.computed++;
    } catch (e) {
      node.error = e ?? new Error(`skyframe: ${key} failed`);
    } finally {
      this.inProgress.pop();
      node.done = true;
    }
    if (fn.persist && this.store && node.error === undefined) this.persist(fn.persist, key, node);
    return node;
  }

  /** Takes `key`'s value from the store when every input it recorded is unchanged and it decodes. */
  private reuse(persist: NonNullable<SkyFunction['persist']>, key: string, node: Node): boolean {
    const entry = this.store!.get(key);
    if (!entry) return false;
    for (const [id, fp] of entry.inputs) if (this.oracle!(id) !== fp) return false;
    try {
      node.value = persist.decode(entry.data);
    } catch {
      return false; // a record this build cannot read: computed again, and stored anew
    }
    for (const [id, fp] of entry.inputs) node.inputs.set(id, fp);
    return true;
  }

  private persist(persist: NonNullable<SkyFunction['persist']>, key: string, node: Node): void {
    let data: Uint8Array;
    try {
      data = persist.encode(node.value);
    } catch {
      return; // a value the codec cannot store is only not cached; the run has it
    }
    this.store!.set(key, { inputs: [...node.inputs], data });
  }
}
