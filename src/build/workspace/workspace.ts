import { isAbsolute, relative } from 'node:path';
import { formatPosition, type Position } from '../core/index.js';
import { findWorkspaceRoot, PackageLoader, readWorkspaceName, Workspace } from '../loading/index.js';
import type { CliIO } from './io.js';
import { outputLayout, type OutputLayout } from './output-base.js';
import { whyDirectoryIsUnusable } from './usable-directory.js';

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

/** The workspace a command runs in, with its loader and output layout. */
export interface WorkspaceContext {
  readonly workspace: Workspace;
  readonly layout: OutputLayout;
  /** Keeps its package cache and external repositories in `layout.outputBase`, as every other file Kiln keeps. */
  readonly loader: PackageLoader;
  /** The working directory's path inside the workspace, for relative target patterns. */
  readonly offset: string;
}

/**
 * How every command that reads a workspace opens it: takes `--output_base` from `args`, finds the
 * workspace above the working directory, and checks that the output base (the one directory that
 * holds everything Kiln keeps for the workspace) is usable, creating it when missing. Returns the
 * context with the remaining arguments, or the problem as a message for `ERROR:` (a usage error).
 */
export function openWorkspace(io: CliIO, command: string, args: readonly string[]): { ctx: WorkspaceContext; rest: string[] } | string {
  const startup = takeOutputBaseFlag(args);
  if (typeof startup === 'string') return startup;
  const root = findWorkspaceRoot(io.cwd);
  if (root === undefined) {
    return `The '${command}' command is only supported from within a workspace (below a directory having a MODULE.bazel, WORKSPACE or WORKSPACE.bazel file).`;
  }
  const workspace = new Workspace(root, readWorkspaceName(root));
  const layout = outputLayout(root, workspace.name, io.env, io.cwd, startup.outputBase);
  // Checked before the loader reads anything: its caches live there.
  const problem = whyDirectoryIsUnusable(layout.outputBase);
  if (problem !== undefined) {
    return startup.outputBase === undefined ? `the output base is unusable: ${problem}` : `--output_base=${startup.outputBase}: ${problem}`;
  }
  const loader = new PackageLoader({ workspace, outputBase: layout.outputBase, onEvent: (kind, message) => io.stderr.write(`${kind}: ${message}\n`) });
  const offset = relative(root, io.cwd);
  return {
    ctx: { workspace, layout, loader, offset: offset.startsWith('..') || isAbsolute(offset) ? '' : offset.split('\\').join('/') },
    rest: startup.rest,
  };
}

/** `ERROR: path/BUILD:12:8: message`, as Bazel prints loading and analysis errors. */
export function printError(io: CliIO, message: string, pos?: Position): void {
  io.stderr.write(`ERROR: ${pos ? `${formatPosition(pos)}: ` : ''}${message}\n`);
}
