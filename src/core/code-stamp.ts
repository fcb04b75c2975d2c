import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Identifies the build of Kiln a module belongs to, for caches whose entries only that build may
 * read: the names, sizes and modification times of the files beside the module. In the bundle the
 * chunks are named by their content, so any change of code changes the stamp even where a package
 * manager resets modification times (npm gives every installed file the same one).
 */
export function codeStamp(moduleUrl: string): string {
  const hash = createHash('sha256');
  try {
    const dir = dirname(fileURLToPath(moduleUrl));
    for (const name of readdirSync(dir).sort()) {
      const st = statSync(`${dir}/${name}`, { throwIfNoEntry: false });
      if (st?.isFile()) hash.update(`${name}:${st.size}:${st.mtimeMs}\n`);
    }
  } catch {
    // Not a file URL or unreadable: entries stay valid for the format version alone.
  }
  return hash.digest('hex').slice(0, 32);
}
