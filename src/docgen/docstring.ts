/** A function's docstring split into Google-style sections (Bazel's DocstringUtils). */
export interface ParsedDocstring {
  /** The first line. */
  readonly summary: string;
  /** The lines after the summary that are in no section. */
  readonly description: string;
  /** `Args:` entries, names as written (`*args`, `**kwargs` keep their stars). */
  readonly params: ReadonlyMap<string, string>;
  readonly returns: string;
  readonly deprecated: string;
}

export interface DocstringError {
  /** 1-based line within the docstring. */
  readonly line: number;
  readonly message: string;
}

const PARAM = /^(\*{0,2}[A-Za-z_][A-Za-z0-9_]*)(?: *\([^)]*\))?:\s*(.*)$/;
const SECTIONS = new Set(['Args:', 'Arguments:', 'Returns:', 'Deprecated:']);

const indentOf = (line: string) => line.length - line.trimStart().length;

/**
 * Parses a trimmed docstring (see trimDocString). A summary not followed by a blank line and a
 * malformed `Args:` entry are errors, as in Bazel, so the caller can refuse to document the function.
 */
export function parseDocstring(doc: string, errors: DocstringError[]): ParsedDocstring {
  const lines = doc.split('\n');
  const summary = lines[0]!.trim();
  const description: string[] = [];
  const params = new Map<string, string>();
  let returns = '';
  let deprecated = '';
  let i = 1;
  if (i < lines.length) {
    if (lines[i]!.trim() !== '') errors.push({ line: i + 1, message: 'the one-line summary should be followed by a blank line' });
    else i++;
  }
  while (i < lines.length) {
    const line = lines[i]!;
    if (!SECTIONS.has(line)) {
      description.push(line);
      i++;
      continue;
    }
    const body: { text: string; line: number }[] = [];
    i++;
    while (i < lines.length && (lines[i]!.trim() === '' || indentOf(lines[i]!) > 0)) {
      body.push({ text: lines[i]!, line: i + 1 });
      i++;
    }
    while (body.length > 0 && body[body.length - 1]!.text.trim() === '') body.pop();
    if (line === 'Returns:') returns = dedent(body.map((b) => b.text));
    else if (line === 'Deprecated:') deprecated = dedent(body.map((b) => b.text));
    else parseParams(body, params, errors);
  }
  return { summary, description: trimBlankLines(description).join('\n'), params, returns, deprecated };
}

function parseParams(body: readonly { text: string; line: number }[], params: Map<string, string>, errors: DocstringError[]): void {
  const entryIndent = body.length > 0 ? indentOf(body[0]!.text) : 0;
  let current: { name: string; lines: string[] } | undefined;
  const flush = () => {
    if (current) params.set(current.name, [current.lines[0]!, dedent(current.lines.slice(1))].filter((s, k) => k === 0 || s !== '').join('\n').trim());
  };
  for (const { text, line } of body) {
    if (text.trim() !== '' && indentOf(text) <= entryIndent) {
      flush();
      const m = PARAM.exec(text.trim());
      if (!m) {
        errors.push({ line, message: 'invalid parameter documentation (expected format: "parameter_name: documentation").' });
        current = undefined;
        continue;
      }
      current = { name: m[1]!, lines: [m[2]!] };
    } else if (current) {
      current.lines.push(text);
    }
  }
  flush();
}

function trimBlankLines(lines: string[]): string[] {
  let a = 0;
  let b = lines.length;
  while (a < b && lines[a]!.trim() === '') a++;
  while (b > a && lines[b - 1]!.trim() === '') b--;
  return lines.slice(a, b);
}

/** Removes the common indentation of the non-blank lines, then leading and trailing blank lines. */
function dedent(lines: readonly string[]): string {
  const kept = trimBlankLines([...lines]);
  const indent = Math.min(...kept.filter((l) => l.trim() !== '').map(indentOf), Number.MAX_SAFE_INTEGER);
  return kept.map((l) => (l.trim() === '' ? '' : l.slice(indent))).join('\n');
}
