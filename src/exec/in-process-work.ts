import { copyFile, cp, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { InProcessWork } from '../actions/index.js';

/** In-process work that writes one regular file. */
type FileWork = Exclude<InProcessWork, { kind: 'copy_directory' | 'copies' | 'unresolved_symlink' | 'fail' }>;

/** The failure an in-process action of kind `fail` reports, with its message as it is. */
export class InProcessFailure extends Error {}

/**
 * Does an in-process action's work at `output` (an absolute path under `execRoot`): writes its file,
 * makes its symlink (the target kept as given), or copies its target directory (symlinks inside
 * copied as they are: they stay inside the tree). `copies` work names its outputs itself.
 */
export async function performInProcessWork(work: InProcessWork, execRoot: string, output: string): Promise<void> {
  if (work.kind === 'fail') throw new InProcessFailure(work.message);
  if (work.kind === 'copies') return performCopies(work, execRoot);
  await mkdir(dirname(output), { recursive: true });
  if (work.kind === 'unresolved_symlink') await symlink(work.targetPath, output);
  else if (work.kind === 'copy_directory') await copyTree(join(execRoot, work.target), output);
  else await writeFile(output, await inProcessContent(work, execRoot));
}

/** The copies, then the writes, of `copies` work, each output's directory made first. */
async function performCopies(work: Extract<InProcessWork, { kind: 'copies' }>, execRoot: string): Promise<void> {
  const made = new Set<string>();
  /** `path` under the execroot, its directory made (once per directory). */
  const placed = async (execPath: string) => {
    const path = join(execRoot, execPath);
    const parent = dirname(path);
    if (!made.has(parent)) await mkdir(parent, { recursive: true });
    made.add(parent);
    return path;
  };
  for (const [from, to] of work.copies) {
    const source = join(execRoot, from);
    const target = await placed(to);
    // copyFile keeps the file's mode, so its executable bit, as cp did.
    if ((await stat(source)).isDirectory()) await copyTree(source, target);
    else await copyFile(source, target);
  }
  for (const [path, text] of work.writes) await writeFile(await placed(path), text);
}

/** A tree artifact's copy: symlinks inside kept as they are (they stay inside the tree). */
function copyTree(source: string, target: string): Promise<void> {
  return cp(source, target, { recursive: true, verbatimSymlinks: true });
}

/**
 * The content an in-process action gives its output: the written text, the template with its
 * substitutions applied (each in order, over the whole text, as Bazel's TemplateExpansionAction),
 * or the bytes of the file a symlink would point to. Files read are the action's inputs, by exec
 * path under the execroot.
 */
export async function inProcessContent(work: FileWork, execRoot: string): Promise<Buffer> {
  switch (work.kind) {
    case 'write':
      return Buffer.from(work.content, 'utf8');
    case 'write_binary': {
      const bytes = Buffer.from(work.base64, 'base64');
      return work.gunzip ? gunzipSync(bytes) : bytes;
    }
    case 'expand_template': {
      let text = await readFile(join(execRoot, work.template), 'utf8');
      for (const [key, value] of work.substitutions) text = text.split(key).join(value);
      return Buffer.from(text, 'utf8');
    }
    case 'symlink':
      return readFile(join(execRoot, work.target));
  }
}
