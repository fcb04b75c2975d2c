import { parseBuildOptions } from '../analysis/index.js';
import { knownTo } from './option-probe.js';

/**
 * Whether a command that takes build options (build, test, run, info, clean, cquery, aquery...)
 * knows the option `word` begins: the one build option parser decides, so `--noflag`, `-c`,
 * `--//pkg:flag` and options Kiln accepts but refuses to honour all count as known.
 */
export function supportsBuildOption(word: string): boolean {
  return knownTo(parseBuildOptions, word);
}
