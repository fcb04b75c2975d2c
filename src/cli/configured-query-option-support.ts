import { parseConfiguredQueryCommandLine, type ConfiguredQueryCommand } from '../build/index.js';
import { knownTo } from './option-probe.js';

/**
 * Whether cquery or aquery knows the option `word` begins: their one option table (the build
 * options and their own, `--output`, `--transitions`, `--starlark:expr`, `--universe_scope`...) decides.
 */
export function supportsConfiguredQueryOption(command: ConfiguredQueryCommand, word: string): boolean {
  return knownTo((args) => parseConfiguredQueryCommandLine(command, args), word);
}
