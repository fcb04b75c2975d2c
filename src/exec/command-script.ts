import { basename } from 'node:path';

/**
 * Linux refuses a single argument above 128 KiB (MAX_ARG_STRLEN) and all of argv plus environment
 * above ARG_MAX; Bazel writes commands above 64 KiB to a script, and so do we.
 */
export const MAX_COMMAND_LINE_BYTES = 64 * 1024;

/** Bytes argv takes in the new process: each argument and its terminating NUL. */
function commandLineBytes(argv: readonly string[]): number {
  let total = 0;
  for (const arg of argv) total += Buffer.byteLength(arg, 'utf8') + 1;
  return total;
}

/**
 * For a command line too long to exec: a shell command `sh|bash -c SCRIPT [$0 [args...]]` becomes
 * `<shell> <script file> [args...]` with SCRIPT written to the file. Returns undefined when argv fits;
 * throws when it does not fit and is not a shell command (nothing can shorten it).
 */
export function scriptedCommand(argv: readonly string[], scriptPath: string): { argv: string[]; script: string } | undefined {
  if (commandLineBytes(argv) <= MAX_COMMAND_LINE_BYTES) return undefined;
  const shell = argv[0] ?? '';
  if (argv.length >= 3 && argv[1] === '-c' && ['bash', 'sh'].includes(basename(shell))) {
    return { argv: [shell, scriptPath, ...argv.slice(4)], script: argv[2]! };
  }
  throw new Error(
    `command line of ${commandLineBytes(argv)} bytes exceeds the ${MAX_COMMAND_LINE_BYTES}-byte limit and is not a shell command that could run from a script`,
  );
}
