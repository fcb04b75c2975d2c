import type { ProcessGroupSpec } from './spawn-process-group.js';

/** Moves itself into each cgroup.procs file given before `--`, then execs the rest. */
const JOIN_SCRIPT = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

/**
 * `spec` started through a shell on the host that first writes its own pid into each of `cgroups`,
 * so the command and everything it forks are in them from their first instruction (a pid written
 * after the start would let early children escape). The shell adds PWD to the environment; `env`
 * puts back exactly the command's. Without cgroups, `spec` as it is.
 */
export function joiningCgroups<T extends ProcessGroupSpec>(spec: T, cgroups: readonly string[] | undefined): T {
  if (!cgroups || cgroups.length === 0) return spec;
  const program = spec.argv[0] ?? '';
  if (program.includes('=')) throw new TypeError(`cannot run a program whose name contains '=' in a cgroup: '${program}'`);
  const pwd = spec.env.PWD === undefined ? ['-u', 'PWD'] : [`PWD=${spec.env.PWD}`];
  return { ...spec, argv: ['/bin/sh', '-c', JOIN_SCRIPT, 'kiln-cgroup', ...cgroups, '--', '/usr/bin/env', ...pwd, ...spec.argv] };
}
