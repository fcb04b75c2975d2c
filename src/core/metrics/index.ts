// Prometheus metrics (prom-client): its own entry, so commands that serve nothing do not load it.
export { Counter, Gauge, Histogram, Registry } from 'prom-client';
export { openMetricsPort, type HttpPages, type MetricsPort } from './metrics-port.js';
export { DURATION_BUCKETS, familiesOf, newMetricsRegistry, secondsSince, STAGE_BUCKETS } from './metric-families.js';
export { actionStageSeconds, outcomeOf } from './action-outcome.js';
