import { ExitCode, UsageError } from '../../core/index.js';
import { CommandOptions, intOption } from '../command-options.js';
import type { CliIO } from '../io.js';

export const OPTIONS = new CommandOptions(
  'Usage: kiln shutdown [--iff_heap_size_greater_than=N]\n\nKiln keeps no server, so there is nothing to stop: it exits 0.\n',
  [
    {
      title: 'Options',
      definitions: [
        intOption(
          'iff_heap_size_greater_than',
          "Only shut down if the server's heap, in MB, is larger than this (Bazel's); Kiln has no server heap, so nothing to act on.",
          0,
          2147483647,
          0,
        ),
      ],
    },
  ],
);

/**
 * `kiln shutdown`: Bazel stops its server; Kiln keeps none, so there is nothing to stop and it
 * succeeds, as Bazel does when no server runs. Bazel's one option, `--iff_heap_size_greater_than=N`,
 * is checked and has nothing to act on either; startup options main.ts handed on are skipped.
 */
export async function main(args: string[], io: CliIO): Promise<number> {
  const own = args.filter((a, i) => !a.startsWith('--output_base') && !(args[i - 1] === '--output_base'));
  try {
    const { residue } = OPTIONS.parse(own);
    if (residue.length > 0) throw new UsageError(`The shutdown command does not take arguments; got '${residue[0]}'`);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.stderr.write(`ERROR: ${e.message}\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  return ExitCode.SUCCESS;
}
