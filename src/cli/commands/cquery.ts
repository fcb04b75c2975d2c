import type { CliIO } from '../io.js';
import { runConfiguredQuery } from '../configured-query-command.js';

/** `kiln cquery EXPR`: a query over the configured target graph of the build options. */
export function main(args: string[], io: CliIO): Promise<number> {
  return runConfiguredQuery('cquery', args, io);
}
