import { isAbsolute, relative } from 'node:path';
import { findWorkspaceRoot, PackageLoader, readWorkspaceName, Workspace } from '../../loading/index.js';
import { outputLayout, type OutputLayout } from './output-base.js';
import { whyDirectoryIsUnusable } from './usable-directory.js';

/** The workspace a command runs in, with its loader and output layout. */
export interface WorkspaceContext {
  readonly workspace: Workspace;
  readonly layout: OutputLayout;
  /** Keeps its package cache and external repositories in `layout.outputBase`, as every other file Kiln keeps. */
  readonly loader: PackageLoader;
  /** The working directory's path inside the workspace, for relative target patterns. */
  readonly offset: string;
}

/** Where and how a command opens its workspace. */
export interface WorkspaceRequest {
  /** The command's name, for the message when there is no workspace. */
  readonly command: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `--output_base`, when given. */
  readonly outputBase?: string;
  /** `print()` output and warnings of BUILD and `.bzl` files. */
  readonly onEvent: (kind: 'DEBUG' | 'WARNING', message: string) => void;
}

/**
 * How every command that reads a workspace opens it: finds the workspace above the working
 * directory, and checks that the output base (the one directory that holds everything Kiln keeps
 * for the workspace) is usable, creating it when missing. Returns the context, or the problem as a
 * message for `ERROR:` (a usage error).
 */
export function openWorkspace(request: WorkspaceRequest): WorkspaceContext | string {
  const { cwd, env, outputBase, command } = request;
  const root = findWorkspaceRoot(cwd);
  if (root === undefined) {
    return `The '${command}' command is only supported from within a workspace (below a directory having a MODULE.bazel, WORKSPACE or WORKSPACE.bazel file).`;
  }
  const workspace = new Workspace(root, readWorkspaceName(root));
  const layout = outputLayout(root, workspace.name, env, cwd, outputBase);
  // Checked before the loader reads anything: its caches live there.
  const problem = whyDirectoryIsUnusable(layout.outputBase);
  if (problem !== undefined) {
    return outputBase === undefined ? `the output base is unusable: ${problem}` : `--output_base=${outputBase}: ${problem}`;
  }
  const loader = new PackageLoader({ workspace, outputBase: layout.outputBase, onEvent: request.onEvent });
  const offset = relative(root, cwd);
  return { workspace, layout, loader, offset: offset.startsWith('..') || isAbsolute(offset) ? '' : offset.split('\\').join('/') };
}
