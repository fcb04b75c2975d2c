import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';

const made: string[] = [];

/** Writes `files` (path -> content; content `@link:target` makes a symlink) into a fresh temp dir. */
export function workspaceFixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'kiln-loading-'));
  made.push(root);
  writeFiles(root, files);
  return root;
}

export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    if (content.startsWith('@link:')) symlinkSync(content.slice(6), full);
    else if (path.endsWith('/')) mkdirSync(full, { recursive: true });
    else writeFileSync(full, content);
  }
}

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
