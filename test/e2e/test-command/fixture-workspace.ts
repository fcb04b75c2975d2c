import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { E2eWorkspace, filesBelow } from '../e2e-workspace.js';

/** The fixture workspace the differential test also uses (recorded with Bazel), as a file map. */
export function fixtureFiles(): Record<string, string> {
  return filesBelow(join(import.meta.dirname, 'workspace'));
}

/** Writes the fixture (and `extra` files over it) with its scripts executable. */
export function fixtureWorkspace(extra: Record<string, string> = {}): E2eWorkspace {
  const ws = new E2eWorkspace({ ...fixtureFiles(), ...extra });
  execFileSync('/bin/sh', ['-c', 'chmod +x */*.sh'], { cwd: ws.root });
  return ws;
}
