import type { CliIO } from '../io.js';
import { runConfiguredQuery } from '../configured-query-command.js';

/** `kiln aquery EXPR`: the actions of the configured targets a query matches. */
export function main(args: string[], io: CliIO): Promise<number> {
  return runConfiguredQuery('aquery', args, io);
}
