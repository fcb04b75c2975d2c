import type { RuleContext } from '../configured/rule-context.js';
import { uniqueFiles, type RuleResult } from './rule-result.js';

/**
 * filegroup (spec, filegroup): the files of all srcs in order without duplicates, or, with
 * `output_group`, that output group of each src; runfiles are the files plus the runfiles of
 * srcs and the files and runfiles of data (so data propagates through other rules' data).
 */
export function analyzeFilegroup(ctx: RuleContext): RuleResult {
  const outputGroup = ctx.attr<string>('output_group', '', true);
  const srcs = ctx.deps('srcs');
  const data = ctx.deps('data');
  const files = uniqueFiles(srcs.flatMap((d) => (outputGroup === '' ? d.files : (d.outputGroups.get(outputGroup) ?? []))));
  const runfiles = uniqueFiles([...files, ...srcs.flatMap((d) => d.runfiles), ...data.flatMap((d) => [...d.files, ...d.runfiles])]);
  return { files, runfiles };
}
