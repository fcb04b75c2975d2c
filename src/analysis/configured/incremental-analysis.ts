import { deserialize, serialize } from 'node:v8';
import type { Position } from '../../core/index.js';
import type { PackageLoader } from '../../loading/index.js';
import { Evaluator, FileStore, SkyFamily, skyFunction, type Environment } from '../../skyframe/index.js';
import type { BuildConfiguration, ConfigurationPair } from '../config/build-configuration.js';
import type { AnalyzerHooks, ConfiguredTargetMemo } from './analyzer.js';
import type { AspectValue } from '../aspects/aspect-value.js';
import type { ConfiguredTarget } from './configured-target.js';
import type { LoadedTargetGraph } from './loaded-target-graph.js';

/** A configured target's key: the target's label and the configuration's id. */
interface ConfiguredTargetId {
  readonly label: string;
  readonly configId: string;
}

/** What analysis said while computing a target, kept with it and said again when it is reused. */
type AnalysisEvent =
  | { readonly kind: 'warning'; readonly message: string; readonly pos: Position }
  | { readonly kind: 'debug'; readonly message: string; readonly where: string };

/** The value of a configured-target key: the target, and the events its analysis reported. */
interface ConfiguredTargetValue {
  readonly ct: ConfiguredTarget;
  readonly events: readonly AnalysisEvent[];
  /** It read the workspace status, which changes every build: never stored. */
  readonly volatile?: boolean;
}

const CONFIGURED_TARGET = new SkyFamily<ConfiguredTargetId, ConfiguredTargetValue>('configured', {
  encode: ({ label, configId }) => `${configId}/${label}`,
  decode: (text) => {
    const slash = text.indexOf('/');
    return { configId: text.slice(0, slash), label: text.slice(slash + 1) };
  },
});

/**
 * An aspect application (aspect, the aspects it sees, target, configuration), by the id aspect
 * analysis gives it. Not persisted (its providers are Starlark values): computed once per command,
 * its reads recorded as a configured target's are, so a stored dependent would still be keyed by them.
 */
const ASPECT = new SkyFamily<string, AspectValue>('aspect', { encode: (id) => id, decode: (id) => id });

/** What the computation of one configured target read outside the graph of configured targets. */
interface Reads {
  readonly env: Environment;
  readonly packages: Set<string>;
  readonly bzls: Set<string>;
  readonly events: AnalysisEvent[];
  volatile: boolean;
}

/** Where the analysis events go (the build's warnings and `print()` lines). */
export interface AnalysisEventSinks {
  readonly warn: (message: string, pos: Position) => void;
  readonly debug: (message: string, where: string) => void;
}

/**
 * Incremental analysis (Bazel's ConfiguredTargetFunction on Skyframe, without a server): each
 * configured target is a Skyframe value keyed by label and configuration, kept in the output base
 * with what its analysis read: the packages of the targets it looked at (by the fingerprint of their
 * value, so a comment that moves nothing leaves them equal), the `.bzl` files of its rule and of what
 * it read (by content), and the configured targets it depends on (by the fingerprint of theirs). A
 * later command reuses a target while all of those are unchanged, and a dependency analysed again to
 * an equal value leaves its dependents reused (change pruning). A target whose value cannot be kept
 * (a Starlark rule's providers; one that read the workspace status, which changes every build) is
 * analysed every time, and so is everything that depends on it.
 */
export class IncrementalAnalysis implements ConfiguredTargetMemo {
  private readonly evaluator: Evaluator;
  private readonly store: FileStore;
  private readonly configurations = new Map<string, BuildConfiguration>();
  /** The computations in progress, innermost last: reads go to the innermost. */
  private readonly frames: Reads[] = [];
  private analyzer: AnalyzerHooks | undefined;
  /** How to compute each aspect application asked for in this command, by id. */
  private readonly aspectComputations = new Map<string, () => AspectValue>();
  /** `package:` inputs' fingerprints, once per command (loading them is what costs). */
  private readonly packageFingerprints = new Map<string, string>();

  constructor(
    private readonly loader: PackageLoader,
    private readonly graph: LoadedTargetGraph,
    configurations: ConfigurationPair,
    storePath: string,
    version: string,
    private readonly sinks: AnalysisEventSinks,
  ) {
    this.configurations.set(configurations.target.id, configurations.target);
    this.configurations.set(configurations.exec.id, configurations.exec);
    this.store = new FileStore(storePath, version);
    this.evaluator = new Evaluator(
      [
        skyFunction(CONFIGURED_TARGET, {
          compute: (id, env) => this.computeValue(id, env),
          persist: { encode: (value) => this.encode(value), decode: (data) => this.decode(data) },
        }),
        skyFunction(ASPECT, { compute: (id, env) => this.computeAspect(id, env) }),
      ],
      this.store,
      (id) => this.inputFingerprint(id),
    );
    const reads = {
      package: (repo: string, pkg: string) => this.frames.at(-1)?.packages.add(`${repo}\u0000${pkg}`),
      bzl: (label: string) => this.frames.at(-1)?.bzls.add(label),
    };
    graph.readObserver = reads;
    loader.packageObserver = reads.package;
  }

  attach(analyzer: AnalyzerHooks): void {
    this.analyzer = analyzer;
  }

  /** Counters: targets analysed, reused, and analysed again to an equal value. */
  get stats() {
    return this.evaluator.stats;
  }

  /** The analysis events: a computed target's go to the sinks and are kept with it. */
  warn(message: string, pos: Position): void {
    this.frames.at(-1)?.events.push({ kind: 'warning', message, pos });
    this.sinks.warn(message, pos);
  }

  debug(message: string, where: string): void {
    this.frames.at(-1)?.events.push({ kind: 'debug', message, where });
    this.sinks.debug(message, where);
  }

  configured(label: string, config: BuildConfiguration): ConfiguredTarget {
    this.configurations.set(config.id, config);
    const key = CONFIGURED_TARGET.key({ label, configId: config.id });
    // Asked during another target's computation: a dependency of it, recorded as such.
    const frame = this.frames.at(-1);
    return (frame ? frame.env.get(key) : this.evaluator.evaluate(key)).ct;
  }

  aspectValue(id: string, compute: () => AspectValue): AspectValue {
    this.aspectComputations.set(id, compute);
    const key = ASPECT.key(id);
    const frame = this.frames.at(-1);
    return frame ? frame.env.get(key) : this.evaluator.evaluate(key);
  }

  readVolatile(): void {
    const frame = this.frames.at(-1);
    if (frame) frame.volatile = true;
  }

  /** Writes the targets analysed in this command to the output base; a failure only costs reuse. */
  flush(): void {
    try {
      this.store.flush();
    } catch {
      // A read-only or full output base: the next command analyses again.
    }
  }

  private computeValue(id: ConfiguredTargetId, env: Environment): ConfiguredTargetValue {
    const config = this.configurations.get(id.configId);
    // A stored dependency in a configuration this command does not have: the dependent is analysed again.
    if (!config) throw new Error(`analysis: no configuration ${id.configId} for ${id.label}`);
    const analyzer = this.analyzer;
    if (!analyzer) throw new Error('analysis: incremental analysis used before an analyzer was attached');
    const { value: ct, frame } = this.framed(env, () => analyzer.compute(id.label, config));
    return { ct, events: frame.events, ...(frame.volatile ? { volatile: true } : {}) };
  }

  private computeAspect(id: string, env: Environment): AspectValue {
    const compute = this.aspectComputations.get(id);
    if (!compute) throw new Error(`analysis: aspect application ${id} asked for without its computation`);
    return this.framed(env, compute).value;
  }

  /** Runs a computation in a frame of its own, then records what it read as inputs of its node. */
  private framed<T>(env: Environment, compute: () => T): { value: T; frame: Reads } {
    const frame: Reads = { env, packages: new Set(), bzls: new Set(), events: [], volatile: false };
    this.frames.push(frame);
    let value: T;
    try {
      value = compute();
    } finally {
      this.frames.pop();
    }
    this.quietly(() => {
      for (const entry of frame.packages) {
        const [repo, pkg] = entry.split('\u0000') as [string, string];
        env.recordInput(`package:${entry}`, this.packageFingerprint(repo, pkg));
      }
      for (const label of frame.bzls) for (const [input, fp] of this.loader.bzlInputs(label)) env.recordInput(input, fp);
    });
    return { value, frame };
  }

  /** Runs `fn` with no computation's reads recorded: what checking and decoding stored values read is nobody's input. */
  private quietly<T>(fn: () => T): T {
    this.frames.push({ env: NO_ENVIRONMENT, packages: new Set(), bzls: new Set(), events: [], volatile: false });
    try {
      return fn();
    } finally {
      this.frames.pop();
    }
  }

  private packageFingerprint(repo: string, pkg: string): string {
    const id = `${repo}\u0000${pkg}`;
    let fp = this.packageFingerprints.get(id);
    if (fp === undefined) {
      fp = this.loader.packageFingerprint(repo, pkg);
      this.packageFingerprints.set(id, fp);
    }
    return fp;
  }

  private inputFingerprint(id: string): string {
    if (!id.startsWith('package:')) return this.loader.inputFingerprint(id);
    const [repo, pkg] = id.slice('package:'.length).split('\u0000') as [string, string];
    return this.quietly(() => this.packageFingerprint(repo, pkg));
  }

  /**
   * The stored form: the configured target without its target (taken from the package again) and
   * configuration (by id), and its events. Refused (not stored) for a Starlark rule's providers,
   * which are Starlark values, and for a target that read the workspace status.
   */
  private encode(value: ConfiguredTargetValue): Uint8Array {
    const { ct, events } = value;
    if (value.volatile) throw new Error('a target that read the workspace status is not stored');
    if (ct.providers !== undefined && ct.providers.size > 0) throw new Error('Starlark providers are not stored');
    const { target: _target, config, providers: _providers, ...rest } = ct;
    return serialize({ ...rest, configId: config.id, events });
  }

  private decode(data: Uint8Array): ConfiguredTargetValue {
    const { configId, events, ...rest } = deserialize(data) as Omit<ConfiguredTarget, 'target' | 'config'> & {
      configId: string;
      events: AnalysisEvent[];
    };
    const config = this.configurations.get(configId);
    if (!config) throw new Error(`analysis: no configuration ${configId}`);
    const target = this.quietly(() => this.graph.target(rest.label));
    if (!target) throw new Error(`analysis: no target ${rest.label}`);
    const ct: ConfiguredTarget = { ...rest, target, config };
    // Said again, as a clean analysis would say it.
    for (const e of events) {
      if (e.kind === 'warning') this.sinks.warn(e.message, e.pos);
      else this.sinks.debug(e.message, e.where);
    }
    this.analyzer?.adopt(ct);
    return { ct, events };
  }
}

/** Stands in for an environment where nothing may be asked (the reads of checking and decoding are dropped). */
const NO_ENVIRONMENT: Environment = {
  get: () => {
    throw new Error('analysis: no dependency may be asked for here');
  },
  recordInput: () => undefined,
};
