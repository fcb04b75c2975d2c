import type { Action } from '../actions/index.js';

/** Bazel's PATH for actions when the client has none. */
export const DEFAULT_ACTION_PATH = '/bin:/usr/bin:/usr/local/bin';

/**
 * The environment an action's key is computed from and its process sees (before TMPDIR, which names
 * a per-run directory and so stays out of the key): the action's own variables plus the client's
 * PATH. Nothing else of the client's environment leaks in (HOME, credentials, locale), so results do
 * not depend on who builds; a change of PATH changes every key and re-runs the actions, as in Bazel.
 */
export function actionEnvironment(action: Action, clientEnv: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = { PATH: clientEnv.PATH || DEFAULT_ACTION_PATH };
  for (const [name, value] of Object.entries(action.env)) env[name] = value;
  return env;
}
