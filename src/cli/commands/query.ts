import { isAbsolute, join, relative, resolve } from 'node:path';
import { ExitCode, formatPosition, isKilnError, type Position } from '../../core/index.js';
import { findWorkspaceRoot, PackageLoader, readWorkspaceName, Workspace } from '../../loading/index.js';
import { orderForOutput, OUTPUT_FORMATTERS, QueryEngine, QuerySyntaxError, TargetPatternError } from '../../query/index.js';
import type { CliIO } from '../io.js';

/** Bazel's query exit codes beyond the common ones: 3 = partial result (--keep_going), 7 = query failed. */
const PARTIAL_SUCCESS = 3;
const QUERY_FAILURE = 7;

interface QueryInvocation {
  expression: string;
  output: string;
  keepGoing: boolean;
  outputBase: string | undefined;
}

function usage(io: CliIO, message: string): number {
  io.stderr.write(`ERROR: ${message}\n`);
  return ExitCode.COMMAND_LINE_ERROR;
}

function parseArgs(args: string[]): QueryInvocation | string {
  const inv: QueryInvocation = { expression: '', output: 'label', keepGoing: false, outputBase: undefined };
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.indexOf('=');
    const name = a.startsWith('--') ? (eq >= 0 ? a.slice(2, eq) : a.slice(2)) : undefined;
    const takeValue = (): string | undefined => (eq >= 0 ? a.slice(eq + 1) : args[++i]);
    if (a === '--') {
      for (const a of args.slice(i + 1)) words.push(a);
      break;
    } else if (a === '-k' || name === 'keep_going') inv.keepGoing = true;
    else if (name === 'nokeep_going') inv.keepGoing = false;
    else if (name === 'output') {
      const v = takeValue();
      if (v === undefined) return "expected a value after '--output'";
      inv.output = v;
    } else if (name === 'output_base') {
      const v = takeValue();
      if (v === undefined) return "expected a value after '--output_base'";
      inv.outputBase = v;
    } else if (name === 'order_output' || name === 'universe_scope') takeValue();
    else if (name !== undefined) return `Unrecognized option: ${a}`;
    else words.push(a);
  }
  if (words.length === 0) return "missing query expression. Type 'kiln help query' for syntax and help.";
  inv.expression = words.join(' ');
  return inv;
}

/** `kiln query EXPR`: evaluates a query over the workspace's packages and prints the result. */
export async function main(args: string[], io: CliIO): Promise<number> {
  const inv = parseArgs(args);
  if (typeof inv === 'string') return usage(io, inv);
  const formatter = OUTPUT_FORMATTERS.get(inv.output);
  if (!formatter) {
    return usage(io, `Invalid output format '${inv.output}'. Valid values are: ${[...OUTPUT_FORMATTERS.keys()].join(', ')}`);
  }
  const root = findWorkspaceRoot(io.cwd);
  if (root === undefined) {
    return usage(io, 'The query command is only supported from within a workspace (below a directory having a MODULE.bazel, WORKSPACE or WORKSPACE.bazel file).');
  }
  const workspace = new Workspace(root, readWorkspaceName(root));
  const loader = new PackageLoader({
    workspace,
    ...(inv.outputBase ? { outputBase: resolve(io.cwd, inv.outputBase) } : {}),
    onEvent: (kind, message) => io.stderr.write(`${kind}: ${message}\n`),
  });
  const printError = (message: string, pos?: Position) =>
    io.stderr.write(`ERROR: ${pos ? `${pos.col > 0 ? formatPosition(pos) : `${pos.file}:${pos.line}`}: ` : ''}${message}\n`);
  const offset = relative(root, io.cwd);
  const engine = new QueryEngine(loader, {
    keepGoing: inv.keepGoing,
    offset: offset.startsWith('..') || isAbsolute(offset) ? '' : offset.split('\\').join('/'),
    onError: printError,
  });
  try {
    const targets = inv.output === 'package' ? engine.evaluate(inv.expression) : orderForOutput(engine.evaluate(inv.expression));
    loader.flush();
    io.stdout.write(
      formatter.format(targets, {
        absolutePath: (p) => (p.startsWith('external/') ? join(loader.outputBase, p) : join(root, p)),
      }),
    );
    if (engine.hadErrors) io.stderr.write('WARNING: --keep_going specified, ignoring errors.  Results may be inaccurate\n');
    if (targets.length === 0) io.stderr.write('INFO: Empty results\n');
    return engine.hadErrors ? PARTIAL_SUCCESS : ExitCode.SUCCESS;
  } catch (e) {
    loader.flush();
    if (e instanceof QuerySyntaxError || e instanceof TargetPatternError) {
      printError(e.message);
      return ExitCode.COMMAND_LINE_ERROR;
    }
    if (isKilnError(e)) {
      printError(e.message, e.pos);
      return QUERY_FAILURE;
    }
    throw e;
  }
}
