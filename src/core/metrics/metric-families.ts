import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The families of one part of Kiln (blob stores, the scheduler, an executor), made once per registry.
 * prom-client refuses a name registered twice, and one process may hold several users of the same
 * families (`kiln cluster up`: the scheduler and its executors; a server's several stores), so every
 * user asks for them here and gets the same objects.
 */
const made = new WeakMap<Registry, Map<string, unknown>>();

export function familiesOf<T>(registry: Registry, part: string, make: (registry: Registry) => T): T {
  let parts = made.get(registry);
  if (!parts) {
    parts = new Map();
    made.set(registry, parts);
  }
  if (!parts.has(part)) parts.set(part, make(registry));
  return parts.get(part) as T;
}

/** A registry of its own, with Node's process metrics (`kiln_process_cpu_seconds_total`, heap, event loop lag...). */
export function newMetricsRegistry(options: { processMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'kiln_' });
  return registry;
}

/** Seconds since `startNs` (process.hrtime.bigint()). */
export function secondsSince(startNs: bigint): number {
  return Number(process.hrtime.bigint() - startNs) / 1e9;
}

/** Histogram buckets for durations of storage and RPCs: 100 µs .. ~100 s, each about three times the last. */
export const DURATION_BUCKETS = [0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100];

/** Buckets for action stages: 1 ms .. 1 h. */
export const STAGE_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
