import { resolve } from 'node:path';
import {
  configuredTargetsFor,
  formatAqueryResult,
  formatCqueryResult,
  parseConfiguredQueryCommandLine,
  type ConfiguredQueryCommand,
  type ConfiguredQueryCommandLine,
} from '../build/index.js';
import { ExitCode, isKilnError, readTextUpTo, UsageError, type Position } from '../core/index.js';
import { interruptibly, type CliIO } from './io.js';
import { applyRcFiles } from './rc-file.js';
import { InterruptedBySigint } from './sigint-breakable.js';
import { openWorkspace, printError as printErrorTo } from './workspace-context.js';

/** The longest query `--query_file` may hold, as for `kiln query`. */
const MAX_QUERY_FILE_BYTES = 64 << 20;

function expressionOf(command: ConfiguredQueryCommand, line: ConfiguredQueryCommandLine, cwd: string): string {
  let expression = line.residue.join(' ');
  const file = line.query.queryFile;
  if (file !== undefined) {
    if (line.residue.length > 0) throw new UsageError('Command-line query and --query_file cannot both be specified');
    const path = resolve(cwd, file);
    let text: string | undefined;
    try {
      text = readTextUpTo(path, MAX_QUERY_FILE_BYTES);
    } catch (e) {
      throw new UsageError(`I/O error reading from ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, undefined, { cause: e });
    }
    if (text === undefined) throw new UsageError(`--query_file=${file}: ${path} is larger than ${MAX_QUERY_FILE_BYTES >> 20} MiB, the most a query may be`);
    expression = text;
  }
  if (expression.trim() === '') throw new UsageError(`missing query expression. Type 'kiln help ${command}' for syntax and help.`);
  return expression;
}

/**
 * `kiln cquery EXPR` and `kiln aquery EXPR`: rc files (both inherit build's lines) and the command
 * line parsed, then src/build's configured query; this prints its result and errors in Bazel's words.
 */
export async function runConfiguredQuery(command: ConfiguredQueryCommand, args: string[], io: CliIO): Promise<number> {
  const printError = (message: string, pos?: Position) => printErrorTo(io, message, pos);
  const opened = openWorkspace(io, command, args);
  if (typeof opened === 'string') {
    printError(opened);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  const { ctx } = opened;
  let line: ConfiguredQueryCommandLine;
  let expression: string;
  try {
    line = parseConfiguredQueryCommandLine(command, await applyRcFiles(command, opened.rest, ctx.workspace.root, io));
    expression = expressionOf(command, line, io.cwd);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    printError(e.message);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  for (const warning of line.warnings) io.stderr.write(`WARNING: ${warning}\n`);
  let query = line.query;
  if (query.starlarkFile !== undefined) {
    const path = resolve(io.cwd, query.starlarkFile);
    let text: string | undefined;
    let problem = 'larger than 64 MiB';
    try {
      text = readTextUpTo(path, MAX_QUERY_FILE_BYTES);
    } catch (e) {
      problem = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    }
    if (text === undefined) {
      printError(`--starlark:file=${query.starlarkFile}: cannot read ${path}: ${problem}`);
      return ExitCode.COMMAND_LINE_ERROR;
    }
    query = { ...query, starlarkFileText: text };
  }
  try {
    const printed = interruptibly(io, () => {
      const outcome = configuredTargetsFor(ctx, {
        command,
        expression,
        options: line.options,
        query,
        clientEnv: io.env,
        onError: printError,
        onWarning: (message, pos) => io.stderr.write(`WARNING: ${pos ? `${pos.file}:${pos.line}:${pos.col}: ` : ''}${message}\n`),
      });
      if ('failed' in outcome) return outcome;
      let outputErrors = false;
      const output =
        command === 'cquery'
          ? formatCqueryResult(outcome, query, (message) => {
              outputErrors = true;
              printError(message);
            })
          : formatAqueryResult(outcome, query);
      return { output, empty: outcome.targets.length === 0, hadErrors: outcome.hadErrors, outputErrors };
    });
    if ('failed' in printed) return printed.failed;
    io.stdout.write(printed.output);
    if (printed.outputErrors) return ExitCode.BUILD_FAILURE;
    if (printed.hadErrors) io.stderr.write('WARNING: --keep_going specified, ignoring errors.  Results may be inaccurate\n');
    if (printed.empty) io.stderr.write('INFO: Empty results\n');
    return printed.hadErrors ? ExitCode.PARTIAL_ANALYSIS_FAILURE : ExitCode.SUCCESS;
  } catch (e) {
    if (e instanceof InterruptedBySigint) {
      printError('query interrupted');
      return ExitCode.INTERRUPTED;
    }
    if (isKilnError(e)) {
      printError(e.message, e.pos);
      return ExitCode.ANALYSIS_FAILURE;
    }
    throw e;
  }
}
