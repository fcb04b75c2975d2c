/**
 * Kiln's Starlark conformance suite: every chunk of every `testdata/*.star` file is run as its own
 * module through `kiln starlark --assert` (in-process), and the errors it reports are compared
 * with the chunk's `### "regex"` expectations (see testdata/README.md).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseChunkedFile, type Chunk } from './chunked-file.js';
import { runStarlark } from './run-starlark-cli.js';

const TESTDATA = join(dirname(fileURLToPath(import.meta.url)), 'testdata');
const ASSERT_MODULE = 'assert.star';
const ERROR_LINE = /^(\S.*?):(\d+):(\d+): (.*)$/;

interface ReportedError {
  file: string;
  line: number;
  message: string;
}

const workDir = mkdtempSync(join(tmpdir(), 'kiln-starlark-conformance-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

function writeChunk(chunk: Chunk): string {
  const dir = join(workDir, `${chunk.file}-${chunk.line}`);
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(TESTDATA, ASSERT_MODULE), join(dir, ASSERT_MODULE));
  for (const m of chunk.modules) {
    mkdirSync(dirname(join(dir, m.name)), { recursive: true });
    writeFileSync(join(dir, m.name), m.source);
  }
  return dir;
}

const TRACEBACK_FRAME = /^\s+(.+?):(\d+):(\d+): in /;

/**
 * A failed assertion is a fail() inside assert.star; report it at the chunk's line that called the
 * assertion (the innermost traceback frame outside assert.star), so the expectation lines up.
 */
function attributeAssertion(error: ReportedError, stderr: string): ReportedError {
  if (error.file !== ASSERT_MODULE) return error;
  const frames = stderr
    .split('\n')
    .map((l) => TRACEBACK_FRAME.exec(l))
    .filter((m): m is RegExpExecArray => m !== null && basename(m[1]!) !== ASSERT_MODULE);
  const caller = frames.at(-1);
  return caller ? { file: basename(caller[1]!), line: Number(caller[2]), message: error.message } : error;
}

function parseErrors(stderr: string, firstOnly: boolean): ReportedError[] | string {
  const lines = stderr.split('\n').filter((l) => l !== '');
  const out: ReportedError[] = [];
  for (const line of firstOnly ? lines.slice(0, 1) : lines) {
    const m = ERROR_LINE.exec(line);
    if (!m) {
      if (out.length === 0) return `first stderr line is not FILE:LINE:COL: MESSAGE: ${JSON.stringify(line)}`;
      continue; // static errors come first; anything after them is free text
    }
    out.push({ file: basename(m[1]!), line: Number(m[2]), message: m[4]! });
  }
  return out;
}

/** Runs a chunk: static checks first (every static error), then evaluation (the first dynamic error). */
async function errorsOf(chunk: Chunk, dir: string): Promise<ReportedError[]> {
  const main = join(dir, chunk.file);
  const flags = ['--assert', ...chunk.options.map((o) => `--option=${o}`)];
  const resolved = await runStarlark([...flags, '--resolve-only', main], dir);
  if (resolved.code === 1) return unwrap(parseErrors(resolved.stderr, false), resolved.stderr);
  if (resolved.code !== 0) throw new Error(`--resolve-only exited ${resolved.code}; stderr:\n${resolved.stderr}`);
  const run = await runStarlark([...flags, main], dir);
  if (run.code === 0) return [];
  if (run.code !== 1) throw new Error(`kiln starlark exited ${run.code}; stderr:\n${run.stderr}`);
  return unwrap(parseErrors(run.stderr, true), run.stderr).map((e) => attributeAssertion(e, run.stderr));
}

function unwrap(errors: ReportedError[] | string, stderr: string): ReportedError[] {
  if (typeof errors === 'string') throw new Error(`${errors}\nstderr:\n${stderr}`);
  return errors;
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
        it(`${file}:${chunk.line}`, async () => {
          const dir = writeChunk(chunk);
          const problems = discrepancies(chunk, await errorsOf(chunk, dir));
          expect(problems, problems.join('\n')).toEqual([]);
        }, 20_000);
      }
    });
  }
});
