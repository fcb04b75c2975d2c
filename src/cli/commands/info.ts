import { join } from 'node:path';
import { parseBuildOptions } from '../../analysis/index.js';
import { ExitCode, isKilnError, UsageError } from '../../core/index.js';
import { OUTPUT_DIR_NAME } from '../../exec/index.js';
import { targetOutputDirectories } from '../../build/index.js';
import { openWorkspace, printError } from '../workspace-context.js';
import type { CliIO } from '../io.js';
import { applyRcFiles } from '../rc-file.js';

/**
 * `kiln info [build flags] [KEY...]`: where this workspace's outputs live. Without keys every
 * `key: value` line; with keys only their values (one per line when one key, `key: value` when
 * several, as Bazel). Build flags such as `-c opt` change the per-configuration paths.
 */
export async function main(args: string[], io: CliIO): Promise<number> {
  const opened = openWorkspace(io, 'info', args);
  if (typeof opened === 'string') {
    printError(io, opened);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  const { ctx } = opened;
  let parsed;
  try {
    parsed = parseBuildOptions(await applyRcFiles('info', opened.rest, ctx.workspace.root, io));
  } catch (e) {
    if (e instanceof UsageError) {
      printError(io, e.message);
      return ExitCode.COMMAND_LINE_ERROR;
    }
    throw e;
  }
  let dirs;
  try {
    dirs = targetOutputDirectories(ctx, parsed.options);
  } catch (e) {
    if (!isKilnError(e)) throw e;
    printError(io, e.message, e.pos);
    return ExitCode.BUILD_FAILURE;
  }
  const { execRoot, outputBase, workspaceRoot } = ctx.layout;
  const values = new Map<string, string>([
    ['kiln-bin', join(execRoot, dirs.bin)],
    ['kiln-genfiles', join(execRoot, dirs.genfiles)],
    ['kiln-testlogs', join(execRoot, dirs.testlogs)],
    ['execution_root', execRoot],
    ['output_base', outputBase],
    ['output_path', join(execRoot, OUTPUT_DIR_NAME)],
    ['workspace', workspaceRoot],
  ]);
  const keys = parsed.residue;
  for (const key of keys) {
    if (!values.has(key)) {
      printError(io, `unknown key: '${key}'`);
      return ExitCode.COMMAND_LINE_ERROR;
    }
  }
  if (keys.length === 1) io.stdout.write(`${values.get(keys[0]!)}\n`);
  else for (const key of keys.length > 0 ? keys : values.keys()) io.stdout.write(`${key}: ${values.get(key)}\n`);
  return ExitCode.SUCCESS;
}
