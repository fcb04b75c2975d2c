import { isAbsolute, relative } from 'node:path';
import { createConfigurations, currentHost, LoadedTargetGraph, platformDeclarationsFrom, type BuildOptions, type ConfigurationPair } from '../analysis/index.js';
import { formatPosition, type Position } from '../core/index.js';
import { findWorkspaceRoot, PackageLoader, readWorkspaceName, Workspace } from '../loading/index.js';
import type { CliIO } from './io.js';
import { outputLayout, type OutputLayout } from './output-base.js';
import { whyDirectoryIsUnusable } from './usable-directory.js';

/** `--output_base` is a startup option in Bazel (`bazel --output_base=X build`); Kiln takes it after the command too. */
export function takeOutputBaseFlag(args: readonly string[]): { rest: string[]; outputBase?: string } | string {
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
  readonly loader: PackageLoader;
  readonly graph: LoadedTargetGraph;
  /** The working directory's path inside the workspace, for relative target patterns. */
  readonly offset: string;
}

export function openWorkspace(io: CliIO, command: string, outputBaseFlag: string | undefined): WorkspaceContext | string {
  const root = findWorkspaceRoot(io.cwd);
  if (root === undefined) {
    return `The '${command}' command is only supported from within a workspace (below a directory having a MODULE.bazel, WORKSPACE or WORKSPACE.bazel file).`;
  }
  const workspace = new Workspace(root, readWorkspaceName(root));
  const layout = outputLayout(root, workspace.name, io.env, io.cwd, outputBaseFlag);
  const loader = new PackageLoader({ workspace, outputBase: layout.outputBase, onEvent: (kind, message) => io.stderr.write(`${kind}: ${message}\n`) });
  const offset = relative(root, io.cwd);
  return {
    workspace,
    layout,
    loader,
    graph: new LoadedTargetGraph(loader),
    offset: offset.startsWith('..') || isAbsolute(offset) ? '' : offset.split('\\').join('/'),
  };
}

/**
 * Why the output base cannot be used (a file is in the way, it cannot be created or written),
 * naming `--output_base` when the flag chose it; undefined when it can. Creates it when missing.
 */
export function outputBaseProblem(ctx: WorkspaceContext, outputBaseFlag: string | undefined): string | undefined {
  const problem = whyDirectoryIsUnusable(ctx.layout.outputBase);
  if (problem === undefined) return undefined;
  return outputBaseFlag === undefined ? `the output base is unusable: ${problem}` : `--output_base=${outputBaseFlag}: ${problem}`;
}

export function configurationsFor(ctx: WorkspaceContext, options: BuildOptions): ConfigurationPair {
  return createConfigurations(options, { host: currentHost(), platforms: platformDeclarationsFrom(ctx.graph) });
}

/** `ERROR: path/BUILD:12:8: message`, as Bazel prints loading and analysis errors. */
export function printError(io: CliIO, message: string, pos?: Position): void {
  io.stderr.write(`ERROR: ${pos ? `${pos.col > 0 ? formatPosition(pos) : `${pos.file}:${pos.line}`}: ` : ''}${message}\n`);
}
