import type { CommandMain } from './io.js';

interface CommandEntry {
  readonly summary: string;
  /** Loaded lazily so that `kiln --version` and `kiln help` stay fast. */
  readonly load: () => Promise<{ main: CommandMain }>;
}

/** Every command Kiln has, in the order `kiln help` lists them. One line per command. */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  cluster: { summary: 'Runs Kiln\'s REAPI cluster (cache, scheduler, executors) in the foreground.', load: () => import('./commands/cluster.js') },
  executor: { summary: 'Runs an executor that takes actions from a Kiln scheduler.', load: () => import('./commands/executor.js') },
  scheduler: { summary: 'Runs Kiln\'s REAPI scheduler (cache and execution) in the foreground.', load: () => import('./commands/scheduler.js') },
  query: { summary: 'Executes a dependency graph query.', load: () => import('./commands/query.js') },
  starlark: { summary: 'Evaluates a Starlark file.', load: () => import('./commands/starlark.js') },
};
