import { parseQueryOptions } from '../query/index.js';
import { knownTo } from './option-probe.js';

/** Whether `kiln query` knows the option `word` begins (its own option parser decides). */
export function supportsQueryOption(word: string): boolean {
  return knownTo(parseQueryOptions, word);
}
