import type { Clock } from '../../src/core/index.js';
import { actionStageSeconds, Counter, familiesOf, Gauge, Histogram, outcomeOf, STAGE_BUCKETS, type Registry } from '../../src/core/metrics/index.js';
import type { ExecutionScheduler, SchedulerObserver } from './execution-scheduler.js';

/** A queue key (platform-rules.ts: JSON of the relevant [name, value] pairs) as a label: `OSFamily=linux,cores=4`. */
export function platformLabel(platformKey: string): string {
  try {
    return (JSON.parse(platformKey) as [string, string][]).map(([n, v]) => `${n}=${v}`).join(',');
  } catch {
    return platformKey;
  }
}

interface SchedulerFamilies {
  readonly actions: Counter<'outcome' | 'cache_result'>;
  readonly stages: Histogram<'stage'>;
  readonly schedulers: Set<{ scheduler: ExecutionScheduler; clock: Clock }>;
}

function familiesOfScheduler(registry: Registry): SchedulerFamilies {
  return familiesOf(registry, 'scheduler', (r) => {
    const registers = [r];
    const schedulers = new Set<{ scheduler: ExecutionScheduler; clock: Clock }>();
    new Gauge({
      name: 'kiln_scheduler_queued_actions',
      help: 'Actions waiting in the queue, per platform (the properties that select executors): what an autoscaler scales on.',
      labelNames: ['platform'],
      registers,
      collect() {
        this.reset();
        for (const { scheduler } of schedulers) for (const q of scheduler.queues()) this.inc({ platform: platformLabel(q.platformKey) }, q.length);
      },
    });
    new Gauge({
      name: 'kiln_scheduler_oldest_queued_action_age_seconds',
      help: 'How long the longest-waiting queued action of each platform has waited.',
      labelNames: ['platform'],
      registers,
      collect() {
        this.reset();
        for (const { scheduler, clock } of schedulers) {
          const now = clock.now();
          for (const q of scheduler.queues()) this.set({ platform: platformLabel(q.platformKey) }, Math.max(0, now - q.oldestQueuedAt) / 1000);
        }
      },
    });
    new Gauge({
      name: 'kiln_scheduler_workers',
      help: 'Live executors by state: idle (free slots, nothing running), busy (running actions), draining (0 slots announced).',
      labelNames: ['state'],
      registers,
      collect() {
        this.reset();
        for (const state of ['idle', 'busy', 'draining']) this.set({ state }, 0);
        for (const { scheduler } of schedulers) {
          for (const e of scheduler.executorStates()) this.inc({ state: e.slots === 0 ? 'draining' : e.running > 0 ? 'busy' : 'idle' });
        }
      },
    });
    new Gauge({
      name: 'kiln_scheduler_worker_executing_actions',
      help: 'Actions each executor is running (in-flight executions per worker).',
      labelNames: ['worker'],
      registers,
      collect() {
        this.reset();
        for (const { scheduler } of schedulers) for (const e of scheduler.executorStates()) this.inc({ worker: e.name }, e.running);
      },
    });
    new Gauge({
      name: 'kiln_scheduler_worker_slots',
      help: 'Slots each executor announces (0 while it drains).',
      labelNames: ['worker'],
      registers,
      collect() {
        this.reset();
        for (const { scheduler } of schedulers) for (const e of scheduler.executorStates()) this.inc({ worker: e.name }, e.slots);
      },
    });
    return {
      schedulers,
      actions: new Counter({
        name: 'kiln_scheduler_actions_total',
        help: 'Execute calls ended, by outcome (success, failure: non-zero exit, cancelled, timeout, error) and cache result (hit: answered from the action cache).',
        labelNames: ['outcome', 'cache_result'],
        registers,
      }),
      stages: new Histogram({
        name: 'kiln_scheduler_action_stage_duration_seconds',
        help: "Time of each stage of executed actions: queued (first queued to assigned, by the scheduler), input_fetch, execution and output_upload (from the executor's ExecutedActionMetadata).",
        labelNames: ['stage'],
        buckets: STAGE_BUCKETS,
        registers,
      }),
    };
  });
}

/** The observer that feeds `registry`'s scheduler families; pass it to the ExecutionScheduler. */
export function schedulerObserver(registry: Registry): SchedulerObserver {
  const f = familiesOfScheduler(registry);
  return {
    operationFinished: (response) => f.actions.inc({ outcome: outcomeOf(response), cache_result: response.cachedResult ? 'hit' : 'miss' }),
    executionAssigned: (_platformKey, queuedMs) => f.stages.observe({ stage: 'queued' }, Math.max(0, queuedMs) / 1000),
    executionReported: (response) => {
      for (const [stage, seconds] of actionStageSeconds(response)) f.stages.observe({ stage }, seconds);
    },
  };
}

/** Reports `scheduler`'s queues and executors in `registry` at every scrape; the returned function stops it. */
export function watchScheduler(registry: Registry, scheduler: ExecutionScheduler, clock: Clock): () => void {
  const entry = { scheduler, clock };
  const { schedulers } = familiesOfScheduler(registry);
  schedulers.add(entry);
  return () => schedulers.delete(entry);
}
