import { runBuildCommand } from '../build-command.js';
import type { CliIO } from '../io.js';

/** `kiln build [flags] PATTERN...`: builds the targets' default outputs (exit 0, 1 build failed, 2 bad command line). */
export async function main(args: string[], io: CliIO): Promise<number> {
  return (await runBuildCommand(args, io, 'build')).exitCode;
}
