import { openWorkspace as openWorkspaceAt, type WorkspaceContext } from '../build/workspace/index.js';
import { formatPosition, type Position } from '../core/index.js';
import type { CliIO } from './io.js';

export type { WorkspaceContext };

/** `--output_base` is a startup option in Bazel (`bazel --output_base=X build`); Kiln takes it after the command too. */
function takeOutputBaseFlag(args: readonly string[]): { rest: string[]; outputBase?: string } | string {
  const rest: string[] = [];
  let outputBase: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      for (const a of args.slice(i)) rest.push(a);
      break;
    }
    if (a === '--output_base') {
      outputBase = args[++i];
      if (outputBase === undefined) return 'Expected value after --output_base';
    } else if (a.startsWith('--output_base=')) outputBase = a.slice('--output_base='.length);
    else rest.push(a);
  }
  return outputBase === undefined ? { rest } : { rest, outputBase };
}

/**
 * How every command that reads a workspace opens it: takes `--output_base` from `args` and opens
 * the workspace above the working directory (build's openWorkspace). Returns the context with the
 * remaining arguments, or the problem as a message for `ERROR:` (a usage error).
 */
export function openWorkspace(io: CliIO, command: string, args: readonly string[]): { ctx: WorkspaceContext; rest: string[] } | string {
  const startup = takeOutputBaseFlag(args);
  if (typeof startup === 'string') return startup;
  const ctx = openWorkspaceAt({
    command,
    cwd: io.cwd,
    env: io.env,
    ...(startup.outputBase === undefined ? {} : { outputBase: startup.outputBase }),
    onEvent: (kind, message) => io.stderr.write(`${kind}: ${message}\n`),
  });
  return typeof ctx === 'string' ? ctx : { ctx, rest: startup.rest };
}

/** `ERROR: path/BUILD:12:8: message`, as Bazel prints loading and analysis errors. */
export function printError(io: CliIO, message: string, pos?: Position): void {
  io.stderr.write(`ERROR: ${pos ? `${formatPosition(pos)}: ` : ''}${message}\n`);
}
