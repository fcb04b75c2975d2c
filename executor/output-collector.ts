import { readFile } from 'node:fs/promises';
import { posix } from 'node:path';
import { digestKey, digestOf, encodeMessage, reapi, type Digest } from '../src/core/index.js';
import type { ExecutorCas } from './cas-client.js';
import { DirectoryHandle, openDirectoryBeneath, openParentBeneath } from './directory-handle.js';

/** Blobs to upload: their bytes are read only if the CAS lacks them. */
class UploadSet {
  private readonly sources = new Map<string, { digest: Digest; load: () => Promise<Buffer> }>();

  addBytes(digest: Digest, data: Buffer): void {
    this.sources.set(digestKey(digest), { digest, load: async () => data });
  }

  async upload(cas: ExecutorCas): Promise<void> {
    await cas.uploadMissing(
      [...this.sources.values()].map((s) => s.digest),
      (d) => this.sources.get(digestKey(d))!.load(),
    );
  }
}

/** stdout or stderr of the run: its bytes, or the file it spilled into. */
type CapturedStream = Buffer | { readonly path: string };

const bytesOf = (stream: CapturedStream): Promise<Buffer> =>
  Buffer.isBuffer(stream) ? Promise.resolve(stream) : readFile(stream.path).catch(() => Buffer.alloc(0));

const isExecutable = (mode: number) => (mode & 0o111) !== 0;
const byName = (a: { readonly name?: string | null | undefined }, b: { readonly name?: string | null | undefined }) =>
  Buffer.compare(Buffer.from(a.name ?? ''), Buffer.from(b.name ?? ''));

/** A Directory message for `dir` and every directory below it (deduplicated), in Tree form; links are never followed. */
async function treeOf(
  dir: DirectoryHandle,
  uploads: UploadSet,
  children: Map<string, reapi.DirectoryInit>,
): Promise<{ directory: reapi.DirectoryInit; digest: Digest }> {
  const directory = { files: [] as reapi.FileNodeInit[], directories: [] as reapi.DirectoryNodeInit[], symlinks: [] as reapi.SymlinkNodeInit[] };
  for (const entry of await dir.entries()) {
    if (entry.isSymbolicLink()) directory.symlinks.push({ name: entry.name, target: await dir.readlink(entry.name) });
    else if (entry.isDirectory()) {
      const handle = await dir.openDirectory(entry.name);
      if (!handle) continue;
      try {
        const sub = await treeOf(handle, uploads, children);
        children.set(digestKey(sub.digest), sub.directory);
        directory.directories.push({ name: entry.name, digest: sub.digest });
      } finally {
        await handle.close();
      }
    } else if (entry.isFile()) {
      const file = await dir.readFile(entry.name);
      if (!file) continue;
      const digest = digestOf(file.data);
      uploads.addBytes(digest, file.data);
      directory.files.push({ name: entry.name, digest, isExecutable: isExecutable(file.mode) });
    }
  }
  directory.files.sort(byName);
  directory.directories.sort(byName);
  directory.symlinks.sort(byName);
  return { directory, digest: encodeMessage(reapi.Directory, directory).digest };
}

/**
 * Gathers an action's outputs after it ran: the paths of Command.output_paths (REAPI 2.1+) or of
 * output_files / output_directories (2.0), relative to the working directory, each reported by what
 * it turned out to be (file, directory as a Tree, symlink); absent outputs are left out, as REAPI
 * allows. Every path is walked from the build directory one component at a time without following a
 * symlink (DirectoryHandle): an output under a symlinked parent is absent, an output that is a
 * symlink is reported as one, and a directory's links are listed, never entered. stdout and stderr
 * are uploaded from memory or their spill files. Every referenced blob ends up in the CAS.
 */
export async function collectOutputs(
  cas: ExecutorCas,
  buildDirectory: string,
  command: reapi.Command,
  streams: { stdout: CapturedStream; stderr: CapturedStream },
): Promise<reapi.ActionResultInit> {
  const uploads = new UploadSet();
  const result = {
    outputFiles: [] as reapi.OutputFileInit[],
    outputDirectories: [] as reapi.OutputDirectoryInit[],
    outputSymlinks: [] as reapi.OutputSymlinkInit[],
    outputFileSymlinks: [] as reapi.OutputSymlinkInit[],
    outputDirectorySymlinks: [] as reapi.OutputSymlinkInit[],
  };
  const modern = command.outputPaths.length > 0;
  const wanted: { path: string; declared: 'path' | 'file' | 'directory' }[] = modern
    ? command.outputPaths.map((path) => ({ path, declared: 'path' as const }))
    : [
        ...command.outputFiles.map((path) => ({ path, declared: 'file' as const })),
        ...command.outputDirectories.map((path) => ({ path, declared: 'directory' as const })),
      ];
  const root = await DirectoryHandle.openRoot(buildDirectory);
  try {
    const cwd = wanted.length > 0 ? await openDirectoryBeneath(root, command.workingDirectory) : undefined;
    try {
      for (const { path, declared } of cwd ? wanted : []) await collectOne(cwd!, path, declared, uploads, result);
    } finally {
      await cwd?.close();
    }
  } finally {
    await root.close();
  }
  const stdout = await bytesOf(streams.stdout);
  const stderr = await bytesOf(streams.stderr);
  const stdoutDigest = digestOf(stdout);
  const stderrDigest = digestOf(stderr);
  uploads.addBytes(stdoutDigest, stdout);
  uploads.addBytes(stderrDigest, stderr);
  await uploads.upload(cas);
  return { ...result, stdoutDigest, stderrDigest };
}

type CollectedOutputs = {
  outputFiles: reapi.OutputFileInit[];
  outputDirectories: reapi.OutputDirectoryInit[];
  outputSymlinks: reapi.OutputSymlinkInit[];
  outputFileSymlinks: reapi.OutputSymlinkInit[];
  outputDirectorySymlinks: reapi.OutputSymlinkInit[];
};

async function collectOne(
  cwd: DirectoryHandle,
  path: string,
  declared: 'path' | 'file' | 'directory',
  uploads: UploadSet,
  result: CollectedOutputs,
): Promise<void> {
  const clean = path === '' ? '' : posix.normalize(path);
  if (clean === '' || clean === '.') {
    // The working directory itself (an output directory '' in REAPI).
    const handle = await cwd.reopen();
    try {
      const children = new Map<string, reapi.DirectoryInit>();
      addDirectory(result, uploads, '', await treeOf(handle, uploads, children), children);
    } finally {
      await handle.close();
    }
    return;
  }
  const located = await openParentBeneath(cwd, clean);
  // A parent that is missing, a symlink or a file: the output is absent.
  if (!located) return;
  const { parent, name } = located;
  try {
    const stat = await parent.lstat(name);
    if (!stat) return;
    if (stat.isSymbolicLink()) {
      const symlink = { path: clean, target: await parent.readlink(name) };
      if (declared === 'path') result.outputSymlinks.push(symlink);
      else if (declared === 'file') result.outputFileSymlinks.push(symlink);
      else result.outputDirectorySymlinks.push(symlink);
    } else if (stat.isDirectory()) {
      const handle = await parent.openDirectory(name);
      if (!handle) return;
      try {
        const children = new Map<string, reapi.DirectoryInit>();
        addDirectory(result, uploads, clean, await treeOf(handle, uploads, children), children);
      } finally {
        await handle.close();
      }
    } else if (stat.isFile()) {
      const file = await parent.readFile(name);
      if (!file) return;
      const digest = digestOf(file.data);
      uploads.addBytes(digest, file.data);
      result.outputFiles.push({ path: clean, digest, isExecutable: isExecutable(file.mode) });
    }
  } finally {
    if (parent !== cwd) await parent.close();
  }
}

function addDirectory(
  result: CollectedOutputs,
  uploads: UploadSet,
  path: string,
  root: { directory: reapi.DirectoryInit; digest: Digest },
  children: Map<string, reapi.DirectoryInit>,
): void {
  const tree = encodeMessage(reapi.Tree, { root: root.directory, children: [...children.values()] });
  uploads.addBytes(tree.digest, tree.data);
  uploads.addBytes(root.digest, encodeMessage(reapi.Directory, root.directory).data);
  result.outputDirectories.push({ path, treeDigest: tree.digest, rootDirectoryDigest: root.digest });
}
