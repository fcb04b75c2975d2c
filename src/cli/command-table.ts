import type { CommandOptions } from './command-options.js';
import type { CommandMain } from './io.js';

interface CommandEntry {
  readonly summary: string;
  /** Loaded lazily so that `kiln --version` and `kiln help` stay fast. */
  readonly load: () => Promise<{ main: CommandMain; OPTIONS?: CommandOptions }>;
}

/** Every command Kiln has, in the order `kiln help` lists them. One line per command. */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = {
  aquery: { summary: 'Queries the action graph of the configured targets a query expression matches.', load: () => import('./commands/aquery.js') },
  build: { summary: 'Builds the specified targets.', load: () => import('./commands/build.js') },
  clean: { summary: 'Removes output files (--expunge: the whole output base).', load: () => import('./commands/clean.js') },
  cluster: { summary: "Runs Kiln's REAPI cluster (cache, scheduler, executors) in the foreground.", load: () => import('./commands/cluster.js') },
  cquery: { summary: 'Executes a query over the configured target graph of the build options.', load: () => import('./commands/cquery.js') },
  executor: { summary: 'Runs an executor that takes actions from a Kiln scheduler.', load: () => import('./commands/executor.js') },
  run: { summary: 'Runs the specified target.', load: () => import('./commands/run.js') },
  scheduler: { summary: "Runs Kiln's REAPI scheduler (cache and execution) in the foreground.", load: () => import('./commands/scheduler.js') },
  info: { summary: "Displays where the workspace's outputs live (output base, execroot, kiln-bin...).", load: () => import('./commands/info.js') },
  query: { summary: 'Executes a dependency graph query.', load: () => import('./commands/query.js') },
  shutdown: { summary: 'Stops the server: Kiln keeps none, so there is nothing to stop.', load: () => import('./commands/shutdown.js') },
  starlark: { summary: 'Evaluates a Starlark file.', load: () => import('./commands/starlark.js') },
  storage: { summary: 'Runs a storage node (CAS and action cache) for a sharded, mirrored cluster.', load: () => import('./commands/storage.js') },
  test: { summary: 'Builds and runs the specified test targets.', load: () => import('./commands/test.js') },
};
