/** A place in a source file. Lines and columns are 1-based; columns count UTF-16 code units. */
export interface Position {
  readonly file: string;
  readonly line: number;
  readonly col: number;
}

export function position(file: string, line: number, col: number): Position {
  return { file, line, col };
}

/**
 * Formats a position the way compilers and Bazel print it: `file:line:col`, or `file:line` when the
 * column is unknown (0), as Bazel's Location prints it. The one formatter of positions: nothing else
 * joins a file, line and column.
 */
export function formatPosition(pos: Position): string {
  return pos.col > 0 ? `${pos.file}:${pos.line}:${pos.col}` : `${pos.file}:${pos.line}`;
}
