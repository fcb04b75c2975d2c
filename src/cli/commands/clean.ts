import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ExitCode, UsageError } from '../../core/index.js';
import { openWorkspace, printError } from '../workspace-context.js';
import type { OptionDefinition, OptionRegistry } from '../../core/options/index.js';
import type { CliIO } from '../io.js';
import { lockOutputBase, removeConvenienceSymlinks } from '../../build/workspace/index.js';
import { applyRcFiles } from '../rc-file.js';

/**
 * `kiln clean`: removes every build output (the execroot with `bazel-out/`) and the caches that
 * describe them, plus the convenience symlinks. `--expunge` removes the whole output base
 * (downloaded repositories, every cache). The disk cache is never touched: it is shared.
 */
export async function main(args: string[], io: CliIO): Promise<number> {
  const opened = openWorkspace(io, 'clean', args);
  if (typeof opened === 'string') {
    printError(io, opened);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  const { ctx } = opened;
  let expunge: boolean;
  let symlinkPrefix: string;
  try {
    // As Bazel's CleanCommand, clean takes build's options (and its rc lines) besides its own.
    const { parseBuildOptions } = await import('../../analysis/index.js');
    const { options, residue } = parseBuildOptions(await applyRcFiles('clean', opened.rest, ctx.workspace.root, io), await cleanOptionRegistry());
    if (residue.length > 0) throw new UsageError(`'clean' takes no arguments, got '${residue[0]}'`);
    expunge = options.getBool('expunge') || options.getBool('expunge_async');
    symlinkPrefix = options.getString('symlink_prefix');
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    printError(io, e.message);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  const { outputBase, execRoot } = ctx.layout;
  io.stderr.write(
    expunge
      ? 'INFO: Starting clean (this may take a while). Consider using --async if the clean takes more than several minutes.\n'
      : 'INFO: Starting clean.\n',
  );
  const abort = new AbortController();
  void io.interrupted?.then(() => abort.abort());
  const release = await lockOutputBase(
    outputBase,
    (pid) => io.stderr.write(`Another command (pid=${pid}) is using the output base ${outputBase}. Waiting for it to complete...\n`),
    abort.signal,
  );
  if (release === undefined) return ExitCode.INTERRUPTED;
  try {
    await removeConvenienceSymlinks(ctx.layout.workspaceRoot, symlinkPrefix);
    if (expunge) await rm(outputBase, { recursive: true, force: true });
    else {
      await rm(dirname(execRoot), { recursive: true, force: true });
      await rm(join(outputBase, 'cache'), { recursive: true, force: true });
    }
  } finally {
    await release();
  }
  return ExitCode.SUCCESS;
}

/** Clean's own options (Bazel's CleanCommand.Options), after the build options. */
export const CLEAN_OPTION_DEFINITIONS: readonly OptionDefinition[] = [
  { name: 'expunge', type: 'bool', default: false, help: 'Removes the entire output base (everything Kiln keeps for the workspace), not only the outputs.' },
  { name: 'expunge_async', type: 'bool', default: false, help: "Bazel's --expunge --async: removes the entire output base (synchronously in Kiln)." },
  { name: 'async', type: 'bool', default: false, help: "Bazel's background clean; Kiln always cleans synchronously, so it changes nothing." },
];

async function cleanOptionRegistry(): Promise<OptionRegistry> {
  return (await import('../../analysis/index.js')).BUILD_OPTIONS.extendedWith(CLEAN_OPTION_DEFINITIONS);
}
