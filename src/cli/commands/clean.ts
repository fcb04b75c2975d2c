import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ExitCode } from '../../core/index.js';
import { openWorkspace, printError } from '../workspace-context.js';
import type { CliIO } from '../io.js';
import { lockOutputBase, removeConvenienceSymlinks } from '../../build/workspace/index.js';

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
  let expunge = false;
  for (const a of opened.rest) {
    if (a === '--expunge') expunge = true;
    else if (a === '--noexpunge') expunge = false;
    else if (a === '--async' || a === '--noasync')
      continue; // Kiln always cleans synchronously.
    else if (a.startsWith('-')) {
      printError(io, `Unrecognized option: ${a}`);
      return ExitCode.COMMAND_LINE_ERROR;
    } else {
      printError(io, `'clean' takes no arguments, got '${a}'`);
      return ExitCode.COMMAND_LINE_ERROR;
    }
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
    await removeConvenienceSymlinks(ctx.layout.workspaceRoot);
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
