import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, resolve } from 'node:path';
import { ExitCode, isKilnError, type KilnError, UsageError } from '../../core/index.js';
import {
  assertHelpers,
  DIALECT_OPTION_NAMES,
  EvalError,
  execResolvedFile,
  UNIVERSAL,
  jsonModule,
  None,
  parseFile,
  resolveFileCollectingErrors,
  StarlarkError,
  StarlarkStaticErrors,
  structBuiltin,
  Thread,
  type DialectOptions,
  type ModuleGlobals,
  type Value,
} from '../../starlark/index.js';
import { boolOption, CommandOptions, repeatedOption } from '../command-options.js';
import { interruptibly, type CliIO } from '../io.js';
import { InterruptedBySigint } from '../sigint-breakable.js';

const USAGE = `Usage: kiln starlark [options] FILE

Evaluates FILE as a Starlark module. print() writes to stdout; errors go to stderr as FILE:LINE:COL: MESSAGE.
`;

/** `--option=NAME` takes each dialect option's name in any case (`globalreassign`). */
const OPTION_NAMES: ReadonlyMap<string, keyof DialectOptions> = new Map(DIALECT_OPTION_NAMES.map((n) => [n.toLowerCase(), n]));

export const OPTIONS = new CommandOptions(USAGE, [
  {
    title: 'Options',
    definitions: [
      repeatedOption('option', `relax one dialect rule: ${[...OPTION_NAMES.keys()].join(', ')}`),
      boolOption('parse-only', 'check syntax only'),
      boolOption('resolve-only', 'check syntax and static rules, reporting every static error'),
      repeatedOption('predeclare', 'treat NAME as predeclared'),
      boolOption('assert', 'predeclare catch, matches, module and _freeze in every module'),
    ],
  },
]);

interface Invocation {
  file: string;
  options: Record<string, boolean>;
  parseOnly: boolean;
  resolveOnly: boolean;
  predeclare: readonly string[];
  assert: boolean;
}

function parseArgs(args: string[]): Invocation {
  const { values, residue } = OPTIONS.parse(args);
  const options: Record<string, boolean> = {};
  for (const name of values.getList('option')) {
    const key = OPTION_NAMES.get(name.toLowerCase());
    if (!key) throw new UsageError(`While parsing option --option=${name}: unknown dialect option (known: ${[...OPTION_NAMES.keys()].join(', ')})`);
    options[key] = true;
  }
  if (residue.length !== 1) throw new UsageError(residue.length === 0 ? 'missing FILE' : `expected one FILE, got ${residue.length}`);
  return {
    file: residue[0]!,
    options,
    parseOnly: values.getBool('parse-only'),
    resolveOnly: values.getBool('resolve-only'),
    predeclare: values.getList('predeclare'),
    assert: values.getBool('assert'),
  };
}

/** Loads each module once (relative to the loading file's folder), detecting cycles. */
class ModuleLoader {
  private readonly done = new Map<string, ModuleGlobals>();
  private readonly inProgress = new Set<string>();

  constructor(
    private readonly cwd: string,
    private readonly options: DialectOptions,
    private readonly predeclared: ReadonlyMap<string, Value>,
    private readonly print: (msg: string) => void,
  ) {}

  /** Runs the module at `displayPath` (as named to the user) and returns its exported globals. */
  run(displayPath: string, source?: string): ModuleGlobals {
    const abs = resolve(this.cwd, displayPath);
    const cached = this.done.get(abs);
    if (cached) return cached;
    if (this.inProgress.has(abs)) throw new StarlarkError(`cycle in load graph: ${displayPath}`);
    let text = source;
    if (text === undefined) {
      try {
        text = readFileSync(abs, 'utf8');
      } catch (e) {
        throw new StarlarkError(`cannot read ${displayPath}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
      }
    }
    this.inProgress.add(abs);
    try {
      const thread = new Thread(
        displayPath,
        {
          load: (_t, module) => this.run(this.resolveLoad(displayPath, module)),
          print: (_t, msg) => this.print(msg),
        },
        this.options,
      );
      const file = parseFile(text, displayPath);
      const errors = resolveFileCollectingErrors(file, this.options, this.predeclared, UNIVERSAL);
      if (errors.length > 0) throw new StarlarkStaticErrors(errors);
      const globals = execResolvedFile(thread, file, this.predeclared);
      const exported = new Map<string, Value>();
      for (const [name, v] of globals) if (!name.startsWith('_')) exported.set(name, v);
      this.done.set(abs, exported);
      return exported;
    } finally {
      this.inProgress.delete(abs);
    }
  }

  private resolveLoad(from: string, module: string): string {
    if (isAbsolute(module)) return module;
    return normalize(join(dirname(from), module));
  }
}

function predeclaredNames(inv: Invocation): Map<string, Value> {
  const m = new Map<string, Value>([
    ['json', jsonModule()],
    ['struct', structBuiltin],
  ]);
  if (inv.assert) for (const [k, v] of assertHelpers()) m.set(k, v);
  for (const name of inv.predeclare) if (!m.has(name)) m.set(name, None);
  return m;
}

function oneLine(s: string): string {
  return s.replace(/\r?\n/g, '\\n');
}

function reportError(e: KilnError, io: CliIO): void {
  if (e instanceof StarlarkStaticErrors) {
    io.stderr.write(`${e.formatAll()}\n`);
    return;
  }
  // The first line is FILE:LINE:COL: MESSAGE on one line, even when a fail() message spans several.
  io.stderr.write(`${oneLine(e.format())}\n`);
  if (e instanceof EvalError && e.callStack.length > 0) io.stderr.write(`${e.backtrace()}\n`);
}

/** `kiln starlark [options] FILE`: the command-line face of the interpreter. */
export async function main(args: string[], io: CliIO): Promise<number> {
  let inv: Invocation;
  try {
    inv = parseArgs(args);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.stderr.write(`ERROR: ${e.message}\n${OPTIONS.help()}`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  let source: string;
  try {
    source = readFileSync(resolve(io.cwd, inv.file), 'utf8');
  } catch (e) {
    io.stderr.write(`ERROR: cannot read ${inv.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  const predeclared = predeclaredNames(inv);
  const options = inv.options as DialectOptions;
  try {
    if (inv.parseOnly || inv.resolveOnly) {
      const file = parseFile(source, inv.file);
      if (inv.resolveOnly) {
        const errors = resolveFileCollectingErrors(file, options, predeclared, UNIVERSAL);
        if (errors.length > 0) throw new StarlarkStaticErrors(errors);
      }
      return ExitCode.SUCCESS;
    }
    let out = '';
    const flush = () => {
      if (out !== '') io.stdout.write(out);
      out = '';
    };
    const loader = new ModuleLoader(io.cwd, options, predeclared, (msg) => {
      out += `${msg}\n`;
      if (out.length > 1 << 16) flush();
    });
    try {
      interruptibly(io, () => loader.run(inv.file, source));
    } finally {
      flush();
    }
    return ExitCode.SUCCESS;
  } catch (e) {
    if (e instanceof InterruptedBySigint) {
      io.stderr.write('ERROR: evaluation interrupted\n');
      return ExitCode.INTERRUPTED;
    }
    if (e instanceof StarlarkError) {
      // Only the loader raises these outside a module (e.g. an unreadable main file): no position.
      io.stderr.write(`${inv.file}:1:1: ${e.message}\n`);
      return ExitCode.BUILD_FAILURE;
    }
    if (isKilnError(e)) {
      reportError(e, io);
      return ExitCode.BUILD_FAILURE;
    }
    throw e;
  }
}
