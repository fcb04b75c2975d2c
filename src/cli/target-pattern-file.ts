import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../core/index.js';

/**
 * The target patterns of a build command: the command line's, or those of `--target_pattern_file`
 * (relative to the working directory), one per line, `#` starting a comment, blank lines skipped,
 * as present-day Bazel's TargetPatternsHelper reads them. Both at once is Bazel's error.
 */
export function targetPatternsOf(residue: readonly string[], patternFile: string, cwd: string): readonly string[] {
  if (patternFile === '') return residue;
  if (residue.length > 0) throw new UsageError('Command-line target pattern and --target_pattern_file cannot both be specified');
  const path = resolve(cwd, patternFile);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UsageError(`I/O error reading from ${path}: ${(e as Error).message}`);
  }
  return text
    .split('\n')
    .map((line) => line.split('#')[0]!.trim())
    .filter((line) => line !== '');
}
