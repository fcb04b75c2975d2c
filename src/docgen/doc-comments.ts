import type { File } from '../starlark/index.js';

/** A `#:` comment: its 1-based line, its text after `#:`, and whether code precedes it on the line. */
interface DocCommentLine {
  readonly line: number;
  readonly text: string;
  readonly trailing: boolean;
}

/** The doc comments of a module: attached to global variables by name, and the lines used by none. */
interface DocComments {
  readonly byGlobal: ReadonlyMap<string, { readonly doc: string; readonly line: number }>;
  readonly unusedLines: readonly number[];
}

/**
 * Finds `#:` doc comments and attaches them as Bazel does: a block of `#:` lines right above a
 * top-level `NAME = ...` assignment, or `#:` comments trailing the assignment's own lines (these win
 * over a block above, which then counts as unused). Every other `#:` line is unused.
 */
export function findDocComments(source: string, file: File): DocComments {
  const comments = scanDocComments(source);
  const byLine = new Map(comments.map((c) => [c.line, c]));
  const used = new Set<number>();
  const byGlobal = new Map<string, { doc: string; line: number }>();
  const linesOf = new Map<string, readonly number[]>();
  const stmts = file.stmts;
  for (let s = 0; s < stmts.length; s++) {
    const stmt = stmts[s]!;
    if (stmt.kind !== 'AssignStmt' || stmt.lhs.kind !== 'Identifier') continue;
    const first = stmt.pos.line;
    const end = s + 1 < stmts.length ? stmts[s + 1]!.pos.line - 1 : Number.MAX_SAFE_INTEGER;
    const trailing = comments.filter((c) => c.trailing && c.line >= first && c.line <= end);
    const leading: DocCommentLine[] = [];
    for (let l = first - 1; byLine.get(l)?.trailing === false; l--) leading.unshift(byLine.get(l)!);
    const chosen = trailing.length > 0 ? trailing : leading;
    if (chosen.length === 0) continue;
    // A global documented again: the earlier comments are no longer attached to anything.
    for (const l of linesOf.get(stmt.lhs.name) ?? []) used.delete(l);
    linesOf.set(
      stmt.lhs.name,
      chosen.map((c) => c.line),
    );
    for (const c of chosen) used.add(c.line);
    byGlobal.set(stmt.lhs.name, {
      doc: chosen
        .map((c) => c.text)
        .join('\n')
        .trim(),
      line: chosen[0]!.line,
    });
  }
  return { byGlobal, unusedLines: comments.filter((c) => !used.has(c.line)).map((c) => c.line) };
}

/** Every `#:` comment outside string literals (single, double and triple quoted). */
function scanDocComments(source: string): DocCommentLine[] {
  const out: DocCommentLine[] = [];
  let line = 1;
  let codeOnLine = false;
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '\n') {
      line++;
      codeOnLine = false;
      i++;
    } else if (c === '#') {
      let j = source.indexOf('\n', i);
      if (j < 0) j = source.length;
      const text = source.slice(i, j);
      if (text.startsWith('#:')) out.push({ line, text: text.slice(2).replace(/^ /, '').trimEnd(), trailing: codeOnLine });
      i = j;
    } else if (c === '"' || c === "'") {
      codeOnLine = true;
      const triple = source.startsWith(c.repeat(3), i);
      const close = triple ? c.repeat(3) : c;
      i += close.length;
      while (i < source.length && !source.startsWith(close, i)) {
        if (source[i] === '\\') i++;
        else if (source[i] === '\n') {
          if (!triple) break;
          line++;
        }
        i++;
      }
      i += close.length;
    } else {
      if (c !== ' ' && c !== '\t' && c !== '\r') codeOnLine = true;
      i++;
    }
  }
  return out;
}
