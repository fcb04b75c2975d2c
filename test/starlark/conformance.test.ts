/**
 * Kiln's Starlark conformance suite: every chunk of every `testdata/*.star` file is run as its own
 * module through the interpreter's API (in memory: no files, no CLI), and the errors it raises,
 * taken as values, are compared with the chunk's `### "regex"` expectations (see testdata/README.md).
 * `cli.test.ts` keeps the command's text format covered.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  assertHelpers,
  DIALECT_OPTION_NAMES,
  EvalError,
  execResolvedFile,
  jsonModule,
  parseFile,
  resolveFileCollectingErrors,
  StarlarkError,
  StarlarkStaticErrors,
  StarlarkSyntaxError,
  structBuiltin,
  Thread,
  UNIVERSAL,
  type DialectOptions,
  type File,
  type ModuleGlobals,
  type Value,
} from '../../src/starlark/index.js';
import type { Position } from '../../src/core/index.js';
import { parseChunkedFile, type Chunk } from './chunked-file.js';

const TESTDATA = join(dirname(fileURLToPath(import.meta.url)), 'testdata');
const ASSERT_MODULE = 'assert.star';
const ASSERT_SOURCE = readFileSync(join(TESTDATA, ASSERT_MODULE), 'utf8');

interface ReportedError {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

const reported = (message: string, pos: Position): ReportedError => ({ file: pos.file, line: pos.line, message });

function dialectOptions(names: readonly string[]): DialectOptions {
  const options: Record<string, boolean> = {};
  for (const name of names) {
    const option = DIALECT_OPTION_NAMES.find((o) => o.toLowerCase() === name.toLowerCase());
    if (option === undefined) throw new Error(`unknown option:${name}`);
    options[option] = true;
  }
  return options;
}

/**
 * The chunk's modules as an embedder serves them: `load` paths relative to the loading module's
 * folder, each module run once on its own thread, `_`-prefixed names not exported, cycles refused.
 */
class ChunkModules {
  private readonly sources: ReadonlyMap<string, string>;
  private readonly done = new Map<string, ModuleGlobals>();
  private readonly running = new Set<string>();
  readonly predeclared: ReadonlyMap<string, Value> = new Map<string, Value>([['json', jsonModule()], ['struct', structBuiltin], ...assertHelpers()]);

  constructor(
    chunk: Chunk,
    readonly options: DialectOptions,
  ) {
    this.sources = new Map([[ASSERT_MODULE, ASSERT_SOURCE], ...chunk.modules.map((m) => [m.name, m.source] as const)]);
  }

  /** Parses and resolves a module, returning its tree or every static error it has. */
  check(path: string): File | StarlarkSyntaxError[] {
    try {
      const file = parseFile(this.sources.get(path)!, path);
      const errors = resolveFileCollectingErrors(file, this.options, this.predeclared, UNIVERSAL);
      return errors.length > 0 ? errors : file;
    } catch (e) {
      if (e instanceof StarlarkSyntaxError) return [e];
      throw e;
    }
  }

  run(path: string, file: File): ModuleGlobals {
    this.running.add(path);
    try {
      const thread = new Thread(path, { load: (_t, module) => this.load(posix.join(posix.dirname(path), module)) }, this.options);
      const exported = new Map<string, Value>();
      for (const [name, v] of execResolvedFile(thread, file, this.predeclared)) if (!name.startsWith('_')) exported.set(name, v);
      this.done.set(path, exported);
      return exported;
    } finally {
      this.running.delete(path);
    }
  }

  private load(path: string): ModuleGlobals {
    const done = this.done.get(path);
    if (done) return done;
    if (this.running.has(path)) throw new StarlarkError(`cycle in load graph: ${path}`);
    if (!this.sources.has(path)) throw new StarlarkError(`no module ${path}`);
    const checked = this.check(path);
    if (Array.isArray(checked)) throw new StarlarkStaticErrors(checked);
    return this.run(path, checked);
  }
}

/**
 * A failed assertion is a fail() inside assert.star; report it at the chunk's line that called the
 * assertion (the innermost frame outside assert.star), so the expectation lines up.
 */
function attributeAssertion(e: EvalError): ReportedError {
  if (e.pos.file !== ASSERT_MODULE) return reported(e.message, e.pos);
  const caller = e.callStack.find((f) => f.pos.file !== ASSERT_MODULE);
  return reported(e.message, caller ? caller.pos : e.pos);
}

/** Runs a chunk: static checks first (every static error), then evaluation (the first dynamic error). */
function errorsOf(chunk: Chunk): ReportedError[] {
  const modules = new ChunkModules(chunk, dialectOptions(chunk.options));
  const checked = modules.check(chunk.file);
  if (Array.isArray(checked)) return checked.map((e) => reported(e.message, e.pos));
  try {
    modules.run(chunk.file, checked);
    return [];
  } catch (e) {
    if (e instanceof EvalError) return [attributeAssertion(e)];
    // A loaded module that does not parse or resolve stops the run at its first error.
    if (e instanceof StarlarkStaticErrors) return [reported(e.errors[0]!.message, e.errors[0]!.pos)];
    if (e instanceof StarlarkSyntaxError) return [reported(e.message, e.pos)];
    throw e;
  }
}

/** Every discrepancy between the expected and the reported errors, one line each. */
function discrepancies(chunk: Chunk, got: ReportedError[]): string[] {
  const problems: string[] = [];
  const pending = [...chunk.expected];
  for (const e of got) {
    const i = pending.findIndex((x) => x.file === e.file && x.line === e.line);
    if (i < 0) {
      problems.push(`${e.file}:${e.line}: unexpected error: ${e.message}`);
      continue;
    }
    const [want] = pending.splice(i, 1);
    if (!want!.pattern.test(e.message)) {
      problems.push(`${e.file}:${e.line}: error ${JSON.stringify(e.message)} does not match ${want!.pattern}`);
    }
  }
  for (const want of pending) problems.push(`${want.file}:${want.line}: expected error matching ${want.pattern}, got none`);
  return problems;
}

const suiteFiles = readdirSync(TESTDATA)
  .filter((f) => f.endsWith('.star') && f !== ASSERT_MODULE)
  .sort();

describe('starlark conformance', () => {
  it('has testdata files', () => expect(suiteFiles.length).toBeGreaterThan(0));

  for (const file of suiteFiles) {
    const chunks = parseChunkedFile(file, readFileSync(join(TESTDATA, file), 'utf8'));
    describe(file, () => {
      for (const chunk of chunks) {
        it(`${file}:${chunk.line}`, () => {
          const problems = discrepancies(chunk, errorsOf(chunk));
          expect(problems, problems.join('\n')).toEqual([]);
        });
      }
    });
  }
});
