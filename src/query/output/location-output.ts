import { formatPosition, type Position } from '../../core/index.js';
import { targetKind } from '../../loading/index.js';
import type { OutputFormatter } from './formatter.js';

/** A target's location with its file made absolute, as query prints it (`path:line`, col 0 unknown). */
export function formatLocation(location: Position, absolutePath: (file: string) => string): string {
  return formatPosition({ ...location, file: absolutePath(location.file) });
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
        return `${formatLocation(loc, (f) => env.absolutePath(f))}: ${targetKind(t.target)} ${t.label}\n`;
      })
      .join(''),
};
