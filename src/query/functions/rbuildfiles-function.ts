import { Label } from '../../loading/index.js';
import { QueryEvaluationError } from '../target-loader.js';
import type { QueryArgument } from '../parser.js';
import type { TargetSet } from '../query-environment.js';
import type { QueryContext, QueryFunction } from './query-function.js';

/**
 * `rbuildfiles(path, ...)`: the BUILD files of the packages in the universe whose BUILD file is one
 * of the paths (workspace-relative) or loads one of them, transitively.
 */
export const rbuildfilesFunction: QueryFunction = {
  name: 'rbuildfiles',
  // Any number of words: the parser stops at ')' after the first.
  argumentTypes: {
    *[Symbol.iterator]() {
      for (;;) yield 'word' as const;
    },
  },
  mandatoryArguments: 1,
  evaluate: rbuildfiles,
};

function rbuildfiles<T>(ctx: QueryContext<T>, args: readonly QueryArgument[]): TargetSet<T> {
  const env = ctx.env;
  const paths = new Set(args.map((a) => (a.kind === 'word' ? a.text.replace(/^\/\//, '').replace(':', '/') : '')));
  for (const p of paths) if (p === '' || p.startsWith('/')) throw new QueryEvaluationError(`rbuildfiles takes workspace-relative file paths, not '${p}'`);
  const out: TargetSet<T> = new Map();
  const seen = new Set<string>();
  for (const t of env.universe()) {
    const pkg = env.packageOf(t);
    if (seen.has(pkg)) continue;
    seen.add(pkg);
    const build = env.buildFile(t);
    if (build === undefined) continue;
    const files = [build, ...env.loadedFiles(t)];
    if (files.some((f) => paths.has(Label.parse(env.labelOf(f)).execPath))) out.set(env.keyOf(build), build);
  }
  return out;
}
