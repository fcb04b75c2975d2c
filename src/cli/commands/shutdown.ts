import { ExitCode } from '../../core/index.js';
import type { CliIO } from '../io.js';

/**
 * `kiln shutdown`: Bazel stops its server; Kiln keeps none, so there is nothing to stop and it
 * succeeds, as Bazel does when no server runs. Bazel's one option, `--iff_heap_size_greater_than=N`
 * (an integer, megabytes), is checked and has nothing to act on either.
 */
export async function main(args: string[], io: CliIO): Promise<number> {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith('--output_base')) {
      if (a === '--output_base') i++;
      continue;
    }
    const m = /^--iff_heap_size_greater_than(?:=(.*))?$/.exec(a);
    if (m) {
      const value = m[1] ?? args[++i];
      if (value === undefined) {
        io.stderr.write(`ERROR: Expected value after ${a}\n`);
        return ExitCode.COMMAND_LINE_ERROR;
      }
      if (!/^\d+$/.test(value)) {
        io.stderr.write(`ERROR: While parsing option --iff_heap_size_greater_than=${value}: '${value}' is not an int\n`);
        return ExitCode.COMMAND_LINE_ERROR;
      }
      continue;
    }
    io.stderr.write(a.startsWith('-') ? `ERROR: Unrecognized option: ${a}\n` : `ERROR: The shutdown command does not take arguments; got '${a}'\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  return ExitCode.SUCCESS;
}
