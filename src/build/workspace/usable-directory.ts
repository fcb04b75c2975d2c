import { mkdirSync, mkdtempSync, rmdirSync, statSync } from 'node:fs';
import { join, parse, relative, resolve, sep } from 'node:path';
import { getSystemErrorMap } from 'node:util';

/**
 * Makes sure `path` is a directory Kiln can write in, creating it and its missing parents one
 * level at a time: Node's recursive mkdir never returns on some paths (`/proc/x` spins forever),
 * and a raw errno later, in the middle of a build, names neither the flag nor the reason. Returns
 * why the directory cannot be used, in words, or undefined when it can.
 */
export function whyDirectoryIsUnusable(path: string): string | undefined {
  const absolute = resolve(path);
  const root = parse(absolute).root;
  let current = root;
  for (const part of relative(root, absolute)
    .split(sep)
    .filter((p) => p !== '')) {
    current = join(current, part);
    const existing = statOrUndefined(current);
    if (existing && !existing.isDirectory()) return `${current} is not a directory`;
    if (existing) continue;
    try {
      mkdirSync(current);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST' && statOrUndefined(current)?.isDirectory()) continue;
      return `cannot create the directory ${current}: ${reason(e)}`;
    }
  }
  // Permission bits do not tell (root ignores them, a read-only mount does not show in them): try.
  try {
    rmdirSync(mkdtempSync(join(absolute, '.kiln-write-check-')));
  } catch (e) {
    return `cannot write in ${absolute}: ${reason(e)}`;
  }
  return undefined;
}

function statOrUndefined(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** `permission denied` rather than `EACCES: permission denied, mkdir '/x'`. */
function reason(e: unknown): string {
  const errno = (e as NodeJS.ErrnoException).errno;
  const known = errno === undefined ? undefined : getSystemErrorMap().get(errno);
  return known ? known[1] : e instanceof Error ? e.message : String(e);
}
