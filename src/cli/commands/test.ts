import { runBuildCommand } from '../build-command.js';
import type { CliIO } from '../io.js';

/**
 * `kiln test [flags] PATTERN...`: builds the targets, then runs the tests among them (test_suites
 * expanded) and prints Bazel's test summary (exit 0, 1 build failed, 2 bad command line, 3 a test
 * failed, 4 no test found).
 */
export async function main(args: string[], io: CliIO): Promise<number> {
  return (await runBuildCommand(args, io, 'test')).exitCode;
}
