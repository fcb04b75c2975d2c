/**
 * Reads a `.star` chunk file: chunks separated by lines that are exactly `---`; a `### "regex"`
 * (or backquoted) comment marks an error expected on that line; `# option:NAME` lines set options.
 * Line numbers stay those of the whole file, so positions in messages can be checked.
 */
export interface Chunk {
  /** The chunk's source, padded with blank lines so line numbers match the file. */
  readonly source: string;
  readonly firstLine: number;
  readonly options: ReadonlySet<string>;
  readonly expected: readonly { line: number; pattern: RegExp }[];
}

export function readChunks(text: string): Chunk[] {
  const lines = text.split('\n');
  const chunks: Chunk[] = [];
  let start = 0;
  for (let i = 0; i <= lines.length; i++) {
    if (i === lines.length || lines[i] === '---') {
      chunks.push(makeChunk(lines, start, i));
      start = i + 1;
    }
  }
  return chunks;
}

function makeChunk(lines: string[], from: number, to: number): Chunk {
  const body = lines.slice(from, to);
  const options = new Set<string>();
  const expected: { line: number; pattern: RegExp }[] = [];
  body.forEach((line, i) => {
    for (const m of line.matchAll(/option:(\w+)/g)) options.add(m[1]!);
    const mark = /### (?:"(.*)"|`(.*)`)/.exec(line);
    if (mark) expected.push({ line: from + i + 1, pattern: new RegExp(mark[1] ?? mark[2]!) });
  });
  return { source: '\n'.repeat(from) + body.join('\n') + '\n', firstLine: from + 1, options, expected };
}
