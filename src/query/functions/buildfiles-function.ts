import type { QueryArgument } from '../parser.js';
import type { TargetSet } from '../query-environment.js';
import { expressionArg, type QueryContext, type QueryFunction } from './query-function.js';

/**
 * `buildfiles(x)`: the files that define the packages of x: each BUILD file, the .bzl files it
 * loads (transitively), and the BUILD files of those .bzl files' packages.
 */
export const buildfilesFunction: QueryFunction = {
  name: 'buildfiles',
  argumentTypes: ['expression'],
  mandatoryArguments: 1,
  evaluate: (ctx, args) => definingFiles(ctx, args, true),
};

/** `loadfiles(x)`: the .bzl files the packages of x load, transitively. */
export const loadfilesFunction: QueryFunction = {
  name: 'loadfiles',
  argumentTypes: ['expression'],
  mandatoryArguments: 1,
  evaluate: (ctx, args) => definingFiles(ctx, args, false),
};

function definingFiles<T>(ctx: QueryContext<T>, args: readonly QueryArgument[], withBuildFiles: boolean): TargetSet<T> {
  const env = ctx.env;
  const out: TargetSet<T> = new Map();
  const add = (t: T | undefined) => t !== undefined && out.set(env.keyOf(t), t);
  const packages = new Set<string>();
  for (const t of expressionArg(ctx, args, 0).values()) {
    if (packages.has(env.packageOf(t))) continue;
    packages.add(env.packageOf(t));
    if (withBuildFiles) add(env.buildFile(t));
    for (const bzl of env.loadedFiles(t)) {
      add(bzl);
      if (withBuildFiles) add(env.buildFile(bzl));
    }
  }
  return out;
}
