import type { kilnWorker, reapi } from '../src/core/index.js';
import { actionStageSeconds, Counter, familiesOf, Gauge, Histogram, outcomeOf, STAGE_BUCKETS, type Registry } from '../src/core/metrics/index.js';
import type { BuildExecutor } from './build-executor.js';

/** What the synchronize loop needs of an executor. */
export type ActionExecutor = Pick<BuildExecutor, 'execute'>;

interface ExecutorFamilies {
  readonly inFlight: Gauge<'worker'>;
  readonly actions: Counter<'worker' | 'outcome'>;
  readonly stages: Histogram<'worker' | 'stage'>;
}

function executorFamiliesOf(registry: Registry): ExecutorFamilies {
  return familiesOf(registry, 'executor', (r) => ({
    inFlight: new Gauge({
      name: 'kiln_executor_actions_in_flight',
      help: 'Actions the executor is running now.',
      labelNames: ['worker'],
      registers: [r],
    }),
    actions: new Counter({
      name: 'kiln_executor_actions_total',
      help: 'Actions the executor finished, by outcome (success, failure: non-zero exit, cancelled, timeout, error).',
      labelNames: ['worker', 'outcome'],
      registers: [r],
    }),
    stages: new Histogram({
      name: 'kiln_executor_action_stage_duration_seconds',
      help: 'Time of the executor-side stages of each action: input_fetch, execution, output_upload.',
      labelNames: ['worker', 'stage'],
      buckets: STAGE_BUCKETS,
      registers: [r],
    }),
  }));
}

/** `executor` measured into `registry` under the label worker=`worker` (Buildbarn's MetricsBuildExecutor). */
export function measuredExecutor(executor: ActionExecutor, registry: Registry, worker: string): ActionExecutor {
  const f = executorFamiliesOf(registry);
  f.inFlight.set({ worker }, 0);
  return {
    execute: async (assignment: kilnWorker.Assignment, reportStage: (stage: kilnWorker.TaskStage) => void, signal: AbortSignal) => {
      f.inFlight.inc({ worker });
      let response: reapi.ExecuteResponseInit | undefined;
      try {
        response = await executor.execute(assignment, reportStage, signal);
        return response;
      } finally {
        f.inFlight.dec({ worker });
        f.actions.inc({ worker, outcome: response ? outcomeOf(response) : 'error' });
        if (response) for (const [stage, seconds] of actionStageSeconds(response)) f.stages.observe({ worker, stage }, seconds);
      }
    },
  };
}
