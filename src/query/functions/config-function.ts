import type { QueryEnvironment } from '../query-environment.js';
import { QueryEvaluationError } from '../target-loader.js';
import { expressionArg, wordArg, type QueryFunction } from './query-function.js';

/** What cquery's environment adds for `config()`: the configurations a label was analysed in. */
export interface ConfigurationLookup<T> {
  /**
   * The instance of t's label in the configuration `config` names (`target`, `exec` or `host`,
   * `null` for source files, or a configuration id or a prefix of one); undefined when the
   * configured graph has none.
   */
  inConfiguration(t: T, config: string): T | undefined;
}

function lookupOf<T>(env: QueryEnvironment<T>): ConfigurationLookup<T> | undefined {
  const candidate = env as QueryEnvironment<T> & Partial<ConfigurationLookup<T>>;
  return typeof candidate.inConfiguration === 'function' ? (candidate as ConfigurationLookup<T>) : undefined;
}

/**
 * cquery's `config(x, configuration)`: the targets of x, each in the named configuration. Those the
 * configured graph does not hold in it are left out; none at all is an error (Bazel's ConfigFunction).
 */
export const configFunction: QueryFunction = {
  name: 'config',
  argumentTypes: ['expression', 'word'],
  mandatoryArguments: 2,
  evaluate: (ctx, args) => {
    const lookup = lookupOf(ctx.env);
    if (!lookup) throw new QueryEvaluationError('config() is only available in cquery');
    const config = wordArg(args, 1);
    const given = expressionArg(ctx, args, 0);
    const out: typeof given = new Map();
    for (const t of given.values()) {
      const found = lookup.inConfiguration(t, config);
      if (found !== undefined) out.set(ctx.env.keyOf(found), found);
    }
    if (out.size === 0) throw new QueryEvaluationError(`No target (in) the expression given to config() could be found in the '${config}' configuration`);
    return out;
  },
};
