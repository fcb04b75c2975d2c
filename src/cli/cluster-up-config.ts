import { parseSchedulerRoleConfig, type ConfigOverrides, type SchedulerRoleConfig } from '../../scheduler/index.js';
import { readClusterExecutorSection, type ClusterExecutorSection } from '../../executor/index.js';

/**
 * `kiln cluster up --config FILE`: the scheduler's config and an `executor` section for the executors
 * it starts. Here, not in scheduler/ or executor/, because it joins the two (they never import each other).
 */
export interface ClusterUpConfig {
  readonly scheduler: SchedulerRoleConfig;
  readonly executor: ClusterExecutorSection;
}

/** Errors are ConfigErrors `field.path: problem` (run it through parseConfigText or inConfigFile to name the file). */
export function parseClusterUpConfig(value: unknown, baseDir: string, overrides: ConfigOverrides = {}): ClusterUpConfig {
  const scheduler = parseSchedulerRoleConfig(value, baseDir, overrides, ['executor']);
  return { scheduler, executor: readClusterExecutorSection((value as Record<string, unknown>)['executor'], baseDir) };
}
