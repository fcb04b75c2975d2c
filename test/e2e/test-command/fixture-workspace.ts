import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { E2eWorkspace } from '../e2e-workspace.js';

/** The fixture workspace the differential test also uses, as a file map. */
export function fixtureFiles(): Record<string, string> {
  const root = join(import.meta.dirname, 'workspace');
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else files[relative(root, full)] = readFileSync(full, 'utf8');
    }
  };
  walk(root);
  return files;
}

/** Writes the fixture with its scripts executable. */
export function fixtureWorkspace(extra: Record<string, string> = {}): E2eWorkspace {
  const ws = new E2eWorkspace({ ...fixtureFiles(), ...extra });
  execFileSync('/bin/sh', ['-c', 'chmod +x */*.sh'], { cwd: ws.root });
  return ws;
}

