import { lstatSync, unlinkSync } from 'node:fs';
import { chmod, readlink, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Action, DerivedArtifact, OutputKind, ProducedOutput } from '../actions/index.js';
import type { FileDigestCache } from './file-digest-cache.js';
import { collectTree, InvalidTreeArtifactError } from './tree-collection.js';

/** Whether `outputs` are exactly the action's declared outputs, no more, no fewer, each of its declared kind. */
export function declaresExactly(action: Action, outputs: readonly ProducedOutput[]): boolean {
  const declared = declaredKinds(action);
  const kindOf = (o: ProducedOutput): OutputKind => (o.kind === 'tree' ? 'directory' : (o.kind ?? 'file'));
  return outputs.length === declared.size && outputs.every((o) => declared.get(o.path) === kindOf(o));
}

/** An action's declared outputs by exec path, with their kinds: what every result is checked against. */
export function declaredKinds(action: Action): Map<string, OutputKind> {
  return new Map(action.outputs.map((o) => [o.execPath, o.type ?? 'file']));
}

/** What a finished action left at its declared outputs. */
export interface DeclaredOutputs {
  readonly outputs: ProducedOutput[];
  /** Declared outputs the action did not create. */
  readonly missing: string[];
  /** The first output of the wrong kind or an invalid tree, in Bazel's words (the action fails). */
  readonly invalid?: string;
}

/**
 * Checks a finished action's declared outputs under `execRoot`: a file must be a readable file (made
 * executable first for executable actions), a directory a tree whose symlinks stay inside it, a
 * symlink a symlink (kept unresolved). One stat per file output, the digest cache's.
 */
export async function digestDeclaredOutputs(action: Action, execRoot: string, digestCache: FileDigestCache): Promise<DeclaredOutputs> {
  const missing: string[] = [];
  const outputs: ProducedOutput[] = [];
  for (const output of action.outputs) {
    const path = join(execRoot, output.execPath);
    try {
      const found = await collectOutput(action, output, path, digestCache);
      if (typeof found === 'string') return { outputs, missing, invalid: found };
      if (found) outputs.push(found);
      else missing.push(output.execPath);
    } catch (e) {
      if (e instanceof InvalidTreeArtifactError) return { outputs, missing, invalid: e.message };
      missing.push(output.execPath);
    }
  }
  return { outputs, missing };
}

/** One declared output as found: undefined when absent, a message when of the wrong kind. */
async function collectOutput(
  action: Action,
  output: DerivedArtifact,
  path: string,
  digestCache: FileDigestCache,
): Promise<ProducedOutput | string | undefined> {
  if (output.type === 'symlink') {
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat) return undefined;
    if (!stat.isSymbolicLink()) return `declared output '${output.execPath}' is not a symlink`;
    return { kind: 'symlink', path: output.execPath, target: await readlink(path) };
  }
  if (output.type === 'directory') {
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat) return undefined;
    // Bazel's words for a declared directory the action left as something else.
    if (!stat.isDirectory()) return `TreeArtifact ${output.execPath.slice(output.root.length + 1)} was not created`;
    return { kind: 'tree', path: output.execPath, tree: await collectTree(path, output.execPath, digestCache) };
  }
  if (action.executableOutputs) await chmod(path, 0o755);
  const file = await digestCache.digest(path, { settled: true });
  if (file.isDirectory)
    return `output '${output.execPath}' of ${action.owner} is a directory; declare it with ctx.actions.declare_directory to make a tree artifact`;
  return { path: output.execPath, digest: file.digest, isExecutable: file.isExecutable };
}

/** Removes an action's declared outputs (before it runs, and after it fails). */
export async function deleteDeclaredOutputs(action: Action, execRoot: string, digestCache: FileDigestCache): Promise<void> {
  for (const o of action.outputs) {
    const path = join(execRoot, o.execPath);
    digestCache.forget(path);
    // Usually absent or a file: one unlink. Anything else (a tree artifact, a directory left by hand) goes whole.
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
