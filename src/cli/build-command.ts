import { parseBuildOptions, type BuildOptions } from '../analysis/index.js';
import { optionWords, runBuild, type BuildResult, type RecordedCommandLine, type WorkspaceContext } from '../build/index.js';
import { ExitCode, UsageError } from '../core/index.js';
import { buildPrinter, type PrinterOptions } from './build-printer.js';
import type { CliIO } from './io.js';
import { applyRcFiles } from './rc-file.js';
import { InterruptedBySigint } from './sigint-breakable.js';
import { targetPatternsOf } from './target-pattern-file.js';
import { printTestSummary, type TestSummaryFormat } from './test-summary.js';
import { openWorkspace, printError } from './workspace-context.js';

/** A finished build with the workspace it ran in (`kiln run` starts the program there). */
export interface BuildCommandResult extends BuildResult {
  readonly ctx?: WorkspaceContext;
  /** `--symlink_prefix`, for paths shown after the build (`kiln run`'s command line). */
  readonly symlinkPrefix?: string;
  /** `--run_under`, as written (`kiln run` runs the program under it through bash, as Bazel does). */
  readonly runUnder?: string;
}

/**
 * `kiln build`, `kiln test` and the build half of `kiln run` on the command line: the workspace, rc
 * files and flags, then the build tool, whose events are printed as they come, then the test summary.
 */
export async function runBuildCommand(args: readonly string[], io: CliIO, command: 'build' | 'run' | 'test'): Promise<BuildCommandResult> {
  const startedAt = performance.now();
  const opened = openWorkspace(io, command, args);
  if (typeof opened === 'string') {
    printError(io, opened);
    return { exitCode: ExitCode.COMMAND_LINE_ERROR, targets: [] };
  }
  const { ctx } = opened;
  let options: BuildOptions;
  let patterns: readonly string[];
  let commandLine: RecordedCommandLine;
  try {
    let warnings: readonly string[];
    let residue: readonly string[];
    const expanded = await applyRcFiles(command, opened.rest, ctx.workspace.root, io);
    ({ options, residue, warnings } = parseBuildOptions(expanded));
    patterns = targetPatternsOf(residue, options.getString('target_pattern_file'), io.cwd);
    commandLine = {
      originalArgs: args,
      explicitOptions: optionWords(opened.rest, residue),
      allOptions: optionWords(expanded, residue),
      canonicalOptions: options.canonicalForms(),
      startupOptions: [],
    };
    for (const warning of warnings) io.stderr.write(`WARNING: ${warning}\n`);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    printError(io, e.message);
    return { exitCode: ExitCode.COMMAND_LINE_ERROR, targets: [] };
  }
  const result = await runBuild(
    {
      command,
      workspace: ctx,
      options,
      patterns,
      cwd: io.cwd,
      env: io.env,
      toolVersion: io.version ?? 'unknown',
      startedAt,
      startTimeMs: Math.round(Date.now() - (performance.now() - startedAt)),
      commandLine,
      ...(io.interrupted === undefined ? {} : { interrupted: io.interrupted }),
      interruptibly: (work) => {
        try {
          return { value: io.runInterruptibly ? io.runInterruptibly(work) : work() };
        } catch (e) {
          if (e instanceof InterruptedBySigint) return 'interrupted';
          throw e;
        }
      },
    },
    buildPrinter(io, printerOptionsOf(options)),
  );
  if (result.tests) {
    if (result.tests.targets.length > 0)
      printTestSummary(
        result.tests.outcomes,
        result.tests.targets,
        { verboseTimeoutWarnings: options.getBool('test_verbose_timeout_warnings'), format: options.getString('test_summary') as TestSummaryFormat },
        io,
      );
    else printError(io, 'No test targets were found, yet testing was requested');
  }
  return { ...result, ctx, symlinkPrefix: options.getString('symlink_prefix'), runUnder: options.getString('run_under') };
}

/** The printer's flags among the parsed options. */
function printerOptionsOf(options: BuildOptions): PrinterOptions {
  return {
    showResult: options.getInt('show_result'),
    symlinkPrefix: options.getString('symlink_prefix'),
    curses: options.getString('curses') as PrinterOptions['curses'],
  };
}
