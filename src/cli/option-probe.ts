import { UsageError } from '../core/index.js';

/**
 * True unless `parse([word])` rejects the word as an unknown option: a bad or missing value means
 * the option is known. Lets rc handling ask a command's own option parser what it supports.
 */
export function knownTo(parse: (args: readonly string[]) => unknown, word: string): boolean {
  try {
    parse([word]);
    return true;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    return !/^(Unrecognized option|Invalid options syntax)/.test(e.message);
  }
}
