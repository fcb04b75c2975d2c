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
  let listing = '';
  try {
    const dir = dirname(fileURLToPath(moduleUrl));
    for (const name of readdirSync(dir).sort()) {
      const st = statSync(`${dir}/${name}`, { throwIfNoEntry: false });
      if (st?.isFile()) listing += `${name}:${st.size}:${st.mtimeMs}\n`;
    }
  } catch {
    // Not a file URL or unreadable: entries stay valid for the format version alone.
  }
  return stampHash(listing, 0x9e3779b9) + stampHash(listing, 0x85ebca6b);
}

/**
 * 53 bits of a non-cryptographic hash (cyrb53) as 14 hex digits. The stamp tells builds of Kiln apart,
 * which no one forges; two seeds give 106 bits. Not node:crypto, which a command that hashes nothing
 * else would load for this alone.
 */
function stampHash(text: string, seed: number): string {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, '0');
}
