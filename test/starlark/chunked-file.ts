/**
 * Reads the conformance suite's chunked `.star` files (starlark-go's testdata convention):
 * chunks are separated by lines that are exactly `---`; a `### "regex"` comment at the end of a
 * line expects an error on that line whose message matches the regex (a JSON string literal).
 * A chunk's first line may be `# option:NAME ...` to pass `--option=NAME` flags; `# file: NAME`
 * lines start further modules of the chunk (written beside the main file, for load()).
 * Every file of a chunk keeps the line numbers of the original file (it is padded with blank lines).
 */
export interface ExpectedError {
  /** Base name of the module the error must be reported in. */
  readonly file: string;
  readonly line: number;
  readonly pattern: RegExp;
}

export interface ChunkModule {
  readonly name: string;
  readonly source: string;
}

export interface Chunk {
  /** Name of the suite file, e.g. `int.star`; the main module is written under this name. */
  readonly file: string;
  /** 1-based line of the chunk's first line in the suite file. */
  readonly line: number;
  readonly options: readonly string[];
  /** The main module first, then any `# file:` modules. */
  readonly modules: readonly ChunkModule[];
  readonly expected: readonly ExpectedError[];
}

export class ChunkFormatError extends Error {}

const FILE_MARKER = /^# file: *(\S+)\s*$/;
const OPTION_LINE = /^#\s*(option:\S+(\s+option:\S+)*)\s*$/;

export function parseChunkedFile(file: string, text: string): Chunk[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const chunks: Chunk[] = [];
  let start = 0;
  for (let i = 0; i <= lines.length; i++) {
    if (i === lines.length || lines[i] === '---') {
      chunks.push(parseChunk(file, lines, start, i));
      start = i + 1;
    }
  }
  return chunks;
}

function parseChunk(file: string, lines: string[], start: number, end: number): Chunk {
  const options: string[] = [];
  const optionMatch = start < end ? OPTION_LINE.exec(lines[start]!) : null;
  if (optionMatch) options.push(...optionMatch[1]!.split(/\s+/).map((o) => o.slice('option:'.length)));

  const modules: { name: string; first: number; body: string[] }[] = [{ name: file, first: start, body: [] }];
  const expected: ExpectedError[] = [];
  for (let i = start; i < end; i++) {
    const text = lines[i]!;
    const marker = FILE_MARKER.exec(text);
    if (marker) {
      modules.push({ name: marker[1]!, first: i + 1, body: [] });
      continue;
    }
    const current = modules.at(-1)!;
    current.body.push(text);
    const hashes = text.indexOf('###');
    if (hashes >= 0) {
      const literal = text.slice(hashes + 3).trim();
      let pattern: string;
      try {
        pattern = JSON.parse(literal) as string;
        if (typeof pattern !== 'string') throw new Error('not a string');
      } catch {
        throw new ChunkFormatError(`${file}:${i + 1}: not a quoted regexp: ${literal}`);
      }
      expected.push({ file: current.name, line: i + 1, pattern: new RegExp(pattern) });
    }
  }
  return {
    file,
    line: start + 1,
    options,
    modules: modules.map((m) => ({ name: m.name, source: '\n'.repeat(m.first) + m.body.join('\n') + '\n' })),
    expected,
  };
}
