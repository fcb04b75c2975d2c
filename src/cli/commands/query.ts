import { join, resolve } from 'node:path';
import { ExitCode, isKilnError, readTextUpTo, UsageError, type Position } from '../../core/index.js';
import {
  formatQueryResult,
  OUTPUT_FORMATTERS,
  parseQueryOptions,
  QueryEngine,
  QuerySyntaxError,
  TargetPatternError,
  type QueryOptionValues,
} from '../../query/index.js';
import { interruptibly, type CliIO } from '../io.js';
import { InterruptedBySigint } from '../sigint-breakable.js';
import { applyRcFiles } from '../rc-file.js';
import { openWorkspace, printError as printErrorTo } from '../workspace-context.js';

/** The longest query `--query_file` may hold: 64 MiB, far above real ones (a `set()` of 100,000 labels is about 5 MB). */
const MAX_QUERY_FILE_BYTES = 64 << 20;

interface QueryInvocation {
  readonly expression: string;
  readonly options: QueryOptionValues;
}

function parseArgs(args: readonly string[], cwd: string): QueryInvocation {
  const { options, residue } = parseQueryOptions(args);
  let expression = residue.join(' ');
  if (options.queryFile !== undefined) {
    if (residue.length > 0) throw new UsageError('Command-line query and --query_file cannot both be specified');
    const path = resolve(cwd, options.queryFile);
    let text: string | undefined;
    try {
      text = readTextUpTo(path, MAX_QUERY_FILE_BYTES);
    } catch (e) {
      throw new UsageError(`I/O error reading from ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, undefined, { cause: e });
    }
    if (text === undefined)
      throw new UsageError(`--query_file=${options.queryFile}: ${path} is larger than ${MAX_QUERY_FILE_BYTES >> 20} MiB, the most a query may be`);
    expression = text;
  }
  if (expression.trim() === '') throw new UsageError("missing query expression. Type 'kiln help query' for syntax and help.");
  return { expression, options };
}

/** `kiln query EXPR`: evaluates a query over the workspace's packages and prints the result. */
export async function main(args: string[], io: CliIO): Promise<number> {
  const printError = (message: string, pos?: Position) => printErrorTo(io, message, pos);
  const opened = openWorkspace(io, 'query', args);
  if (typeof opened === 'string') {
    printError(opened);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  const { ctx } = opened;
  const { loader } = ctx;
  let inv: QueryInvocation;
  try {
    inv = parseArgs(await applyRcFiles('query', opened.rest, ctx.workspace.root, io), io.cwd);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    printError(e.message);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  const { options } = inv;
  const engine = new QueryEngine(loader, {
    keepGoing: options.keepGoing,
    offset: ctx.offset,
    noImplicitDeps: !options.implicitDeps,
    noToolDeps: !options.toolDeps,
    ...(options.universeScope.length > 0 ? { universeScope: options.universeScope } : {}),
    onError: printError,
  });
  try {
    const { targets, output } = interruptibly(io, () => {
      const targets = engine.evaluate(inv.expression);
      loader.flush();
      const output = formatQueryResult(targets, OUTPUT_FORMATTERS.get(options.output)!, engine.environment, {
        orderOutput: options.orderOutput,
        graphFactored: options.graphFactored,
        graphNodeLimit: options.graphNodeLimit,
        graphConditionalEdgesLimit: options.graphConditionalEdgesLimit,
        absolutePath: (p) => (p.startsWith('external/') ? join(loader.outputBase, p) : join(ctx.workspace.root, p)),
      });
      return { targets, output };
    });
    io.stdout.write(output);
    if (engine.hadErrors) io.stderr.write('WARNING: --keep_going specified, ignoring errors.  Results may be inaccurate\n');
    if (targets.length === 0) io.stderr.write('INFO: Empty results\n');
    return engine.hadErrors ? ExitCode.PARTIAL_ANALYSIS_FAILURE : ExitCode.SUCCESS;
  } catch (e) {
    // Bazel's words and code; nothing is kept of an evaluation cut short anywhere.
    if (e instanceof InterruptedBySigint) {
      printError('query interrupted');
      return ExitCode.INTERRUPTED;
    }
    loader.flush();
    if (e instanceof QuerySyntaxError) {
      printError(e.message);
      return ExitCode.COMMAND_LINE_ERROR;
    }
    // A malformed target pattern is an evaluation failure in Bazel's query (exit 7), unlike `build` (exit 1).
    if (e instanceof TargetPatternError) {
      printError(e.message);
      return ExitCode.ANALYSIS_FAILURE;
    }
    if (isKilnError(e)) {
      printError(e.message, e.pos);
      return ExitCode.ANALYSIS_FAILURE;
    }
    throw e;
  }
}
