import { InvalidArgumentError } from '../../src/core/index.js';

/**
 * How a platform property of an action is matched against an executor's properties:
 * - `exact`: the executor offers the same value (an executor may offer several values for a name);
 * - `minimum`: both are numbers and the executor's is at least the action's (cores, memory);
 * - `ignore`: not used for matching, nor for choosing a queue.
 * Names without a rule match exactly, except the properties the executor's runner interprets: the
 * resource-limit properties (`max-mem`, `max-cores`, `max-pids`) size the action's container or cgroup
 * on whichever executor runs it, within its operator's ceilings, and `container-image` names the image
 * a docker runner starts (the local runner refuses it), so they are ignored unless a rule names them.
 */
export type PropertyMatch = 'exact' | 'minimum' | 'ignore';

export interface PlatformProperty {
  readonly name: string;
  readonly value: string;
}

/** Properties an executor's runner interprets (executor/runners/resource-limits.ts, docker-runner.ts). */
const EXECUTOR_INTERPRETED_PROPERTIES: Readonly<Record<string, PropertyMatch>> = {
  'max-mem': 'ignore',
  'max-cores': 'ignore',
  'max-pids': 'ignore',
  'container-image': 'ignore',
};

export class PlatformRules {
  constructor(private readonly rules: Readonly<Record<string, PropertyMatch>> = {}) {
    for (const [name, match] of Object.entries(rules)) {
      if (match !== 'exact' && match !== 'minimum' && match !== 'ignore') {
        throw new InvalidArgumentError(`platform rule for ${JSON.stringify(name)}: expected exact, minimum or ignore, got ${JSON.stringify(match)}`);
      }
    }
  }

  ruleOf(name: string): PropertyMatch {
    // hasOwn: a property named like an Object.prototype member ('constructor') has no rule.
    if (Object.hasOwn(this.rules, name)) return this.rules[name]!;
    return Object.hasOwn(EXECUTOR_INTERPRETED_PROPERTIES, name) ? EXECUTOR_INTERPRETED_PROPERTIES[name]! : 'exact';
  }

  /** The properties that decide where an action runs, in canonical order (name, then value). */
  relevant(properties: readonly PlatformProperty[]): PlatformProperty[] {
    return properties
      .filter((p) => this.ruleOf(p.name) !== 'ignore')
      .map((p) => ({ name: p.name, value: p.value }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  }

  /** One string per distinct relevant platform: the key of the action's queue. */
  queueKey(properties: readonly PlatformProperty[]): string {
    return JSON.stringify(this.relevant(properties).map((p) => [p.name, p.value]));
  }

  /** Whether an executor offering `offered` satisfies the one `wanted` property. */
  satisfies(wanted: PlatformProperty, offered: readonly PlatformProperty[]): boolean {
    switch (this.ruleOf(wanted.name)) {
      case 'ignore':
        return true;
      case 'exact':
        return offered.some((o) => o.name === wanted.name && o.value === wanted.value);
      case 'minimum': {
        const need = Number(wanted.value);
        return offered.some((o) => o.name === wanted.name && Number.isFinite(need) && Number(o.value) >= need);
      }
    }
  }

  /** Whether an executor offering `offered` can run an action asking for `wanted`. */
  matches(wanted: readonly PlatformProperty[], offered: readonly PlatformProperty[]): boolean {
    return wanted.every((w) => this.satisfies(w, offered));
  }

  /**
   * Properties of `wanted` that none of the executors satisfies; when each is satisfied by some
   * executor but no single executor satisfies all, every relevant property is named.
   */
  unmet(wanted: readonly PlatformProperty[], executors: readonly (readonly PlatformProperty[])[]): PlatformProperty[] {
    const relevant = this.relevant(wanted);
    const alone = relevant.filter((w) => !executors.some((offered) => this.satisfies(w, offered)));
    return alone.length > 0 ? alone : relevant;
  }
}
