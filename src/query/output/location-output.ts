import { targetKind, type Target } from '../../loading/index.js';
import type { OutputFormatter } from './formatter.js';

/** Where Bazel says a target is: a source file is the file itself (line 1), others their declaration. */
export function locationOf(t: Target, pkgDir: string): { file: string; line: number; col: number } {
  if (t.kind === 'source') return { file: pkgDir === '' ? t.name : `${pkgDir}/${t.name}`, line: 1, col: 1 };
  return t.location;
}

/** `--output=location`: `/abs/path/BUILD:line:col: genrule rule //pkg:name`. */
export const locationOutput: OutputFormatter = {
  format: (targets, env) =>
    targets
      .map((t) => {
        const dir = t.pkg.buildFile.includes('/') ? t.pkg.buildFile.slice(0, t.pkg.buildFile.lastIndexOf('/')) : '';
        const loc = locationOf(t.target, dir);
        return `${env.absolutePath(loc.file)}:${loc.line}:${loc.col}: ${targetKind(t.target)} ${t.label}\n`;
      })
      .join(''),
};
