import type { Action } from '../actions/index.js';

/** Bazel's PATH for actions when the client has none. */
export const DEFAULT_ACTION_PATH = '/bin:/usr/bin:/usr/local/bin';

/**
 * The environment an action's key is computed from and its process sees (before TMPDIR, which names
 * a per-run directory and so stays out of the key): the variables every action of the build gets
 * (`base`: by default the client's PATH; see buildActionEnvironment), then the action's own.
 * Nothing else of the client's environment leaks in (HOME, credentials, locale), so results do not
 * depend on who builds; a change of PATH changes every key and re-runs the actions, as in Bazel.
 */
export function actionEnvironment(action: Action, base: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = { ...base };
  for (const [name, value] of Object.entries(action.env)) env[name] = value;
  return env;
}

/**
 * What every action of a build gets, as Bazel's flags make it: PATH (the client's, or with
 * `--incompatible_strict_action_env` the fixed default), then each `--action_env`: `NAME=VALUE`
 * sets it, a bare `NAME` takes the client's value (and is left out when the client has none); a later
 * flag for a name wins.
 */
export function buildActionEnvironment(
  clientEnv: Readonly<Record<string, string | undefined>>,
  actionEnvFlags: readonly string[] = [],
  strict = false,
): Record<string, string> {
  const env: Record<string, string> = { PATH: (strict ? undefined : clientEnv.PATH) || DEFAULT_ACTION_PATH };
  for (const flag of actionEnvFlags) {
    const eq = flag.indexOf('=');
    if (eq > 0) env[flag.slice(0, eq)] = flag.slice(eq + 1);
    else {
      const value = clientEnv[flag];
      if (value === undefined) delete env[flag];
      else env[flag] = value;
    }
  }
  return env;
}

/**
 * Whether an action belongs to an exec configuration (a tool built for the execution platform): its
 * outputs are under a configuration directory named `<cpu>-<mode>-exec` (or `...-exec-<suffix>`, as
 * Bazel names transitioned exec configurations). Such actions get `--host_action_env` instead of
 * `--action_env`, as Bazel's exec transition sets the one from the other.
 */
export function isExecConfigurationAction(action: Action, outputRoot = 'bazel-out'): boolean {
  const path = action.outputs[0]?.execPath;
  if (path === undefined || !path.startsWith(`${outputRoot}/`)) return false;
  const configurationDir = path.slice(outputRoot.length + 1).split('/', 1)[0]!;
  return /-exec($|-)/.test(configurationDir);
}
