import { targetKind } from '../../loading/index.js';
import type { OutputFormatter } from './formatter.js';

/** `path:line:col`, or `path:line` when the column is unknown (col 0), as Bazel 2.1 prints locations. */
export function formatLocation(file: string, line: number, col: number): string {
  return col > 0 ? `${file}:${line}:${col}` : `${file}:${line}`;
}

/**
 * `--output=location`: `/abs/path/BUILD:line:col: genrule rule //pkg:name`. A source file is where a
 * rule first named it (the BUILD file itself: line 1, no column), as in Bazel 2.1.
 */
export const locationOutput: OutputFormatter = {
  ordering: 'targets',
  format: (targets, env) =>
    targets
      .map((t) => {
        const loc = t.target.location;
        return `${formatLocation(env.absolutePath(loc.file), loc.line, loc.col)}: ${targetKind(t.target)} ${t.label}\n`;
      })
      .join(''),
};
