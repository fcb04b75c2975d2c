import { unlinkSync } from 'node:fs';
import { chmod, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Action } from '../actions/index.js';
import type { CachedOutput } from './disk-cache.js';
import type { FileDigestCache } from './file-digest-cache.js';

/** Whether `outputs` are exactly the action's declared outputs, no more, no fewer. */
export function declaresExactly(action: Action, outputs: readonly CachedOutput[]): boolean {
  const declared = new Set(action.outputs.map((o) => o.execPath));
  return outputs.length === declared.size && outputs.every((o) => declared.has(o.path));
}

/**
 * Checks a finished action's declared outputs under `execRoot`: each must be a readable file (made
 * executable first for executable actions). One stat per output, the digest cache's.
 */
export async function digestDeclaredOutputs(
  action: Action,
  execRoot: string,
  digestCache: FileDigestCache,
): Promise<{ readonly outputs: CachedOutput[]; readonly missing: string[] }> {
  const missing: string[] = [];
  const outputs: CachedOutput[] = [];
  for (const output of action.outputs) {
    const path = join(execRoot, output.execPath);
    try {
      if (action.executableOutputs) await chmod(path, 0o755);
      const file = await digestCache.digest(path, { settled: true });
      if (file.isDirectory) missing.push(output.execPath);
      else outputs.push({ path: output.execPath, digest: file.digest, isExecutable: file.isExecutable });
    } catch {
      missing.push(output.execPath);
    }
  }
  return { outputs, missing };
}

/** Removes an action's declared outputs (before it runs, and after it fails). */
export async function deleteDeclaredOutputs(action: Action, execRoot: string, digestCache: FileDigestCache): Promise<void> {
  for (const o of action.outputs) {
    const path = join(execRoot, o.execPath);
    digestCache.forget(path);
    // Usually absent or a file: one unlink. Anything else (a directory left by hand) goes whole.
    try {
      unlinkSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') await rm(path, { recursive: true, force: true });
    }
  }
}

/** `'a'` / `'a', 'b'` and the verb that goes with them, for "declared output ... was not created". */
export function missingOutputsMessage(missing: readonly string[]): string {
  const list = missing.map((m) => `'${m}'`).join(', ');
  return `declared output${missing.length > 1 ? 's' : ''} ${list} ${missing.length > 1 ? 'were' : 'was'} not created`;
}
