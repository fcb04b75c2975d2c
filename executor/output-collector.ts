import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { digestKey, digestOf, encodeMessage, reapi, type Digest } from '../src/core/index.js';
import type { CasClient } from './cas-client.js';

/** Blobs to upload: their bytes are read only if the CAS lacks them. */
class UploadSet {
  private readonly sources = new Map<string, { digest: Digest; load: () => Promise<Buffer> }>();

  addFile(digest: Digest, path: string): void {
    this.sources.set(digestKey(digest), { digest, load: () => readFile(path) });
  }

  addBytes(digest: Digest, data: Buffer): void {
    this.sources.set(digestKey(digest), { digest, load: async () => data });
  }

  async upload(cas: CasClient): Promise<void> {
    await cas.uploadMissing(
      [...this.sources.values()].map((s) => s.digest),
      (d) => this.sources.get(digestKey(d))!.load(),
    );
  }
}

/** stdout or stderr of the run: its bytes, or the file it spilled into. */
export type CapturedStream = Buffer | { readonly path: string };

const bytesOf = (stream: CapturedStream): Promise<Buffer> =>
  Buffer.isBuffer(stream) ? Promise.resolve(stream) : readFile(stream.path).catch(() => Buffer.alloc(0));

const isExecutable = (mode: number) => (mode & 0o111) !== 0;
const byName = (a: { name?: string | null }, b: { name?: string | null }) => Buffer.compare(Buffer.from(a.name ?? ''), Buffer.from(b.name ?? ''));

/** A Directory message for `path` and every directory below it (deduplicated), in Tree form. */
async function treeOf(path: string, uploads: UploadSet, children: Map<string, reapi.DirectoryInit>): Promise<{ directory: reapi.DirectoryInit; digest: Digest }> {
  const directory = { files: [] as reapi.FileNodeInit[], directories: [] as reapi.DirectoryNodeInit[], symlinks: [] as reapi.SymlinkNodeInit[] };
  for (const entry of await readdir(path, { withFileTypes: true })) {
    const full = join(path, entry.name);
    if (entry.isSymbolicLink()) directory.symlinks.push({ name: entry.name, target: await readlink(full) });
    else if (entry.isDirectory()) {
      const sub = await treeOf(full, uploads, children);
      children.set(digestKey(sub.digest), sub.directory);
      directory.directories.push({ name: entry.name, digest: sub.digest });
    } else if (entry.isFile()) {
      const data = await readFile(full);
      const digest = digestOf(data);
      uploads.addBytes(digest, data);
      directory.files.push({ name: entry.name, digest, isExecutable: isExecutable((await lstat(full)).mode) });
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
 * allows. stdout and stderr are uploaded from memory or their spill files. Every referenced blob ends
 * up in the CAS.
 */
export async function collectOutputs(
  cas: CasClient,
  workingDirectory: string,
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
  for (const { path, declared } of wanted) {
    const full = join(workingDirectory, path);
    const stat = await lstat(full).catch(() => undefined);
    if (!stat) continue;
    const clean = posix.normalize(path);
    if (stat.isSymbolicLink()) {
      const symlink = { path: clean, target: await readlink(full) };
      if (declared === 'path') result.outputSymlinks.push(symlink);
      else if (declared === 'file') result.outputFileSymlinks.push(symlink);
      else result.outputDirectorySymlinks.push(symlink);
    } else if (stat.isDirectory()) {
      const children = new Map<string, reapi.DirectoryInit>();
      const root = await treeOf(full, uploads, children);
      const tree = encodeMessage(reapi.Tree, { root: root.directory, children: [...children.values()] });
      uploads.addBytes(tree.digest, tree.data);
      uploads.addBytes(root.digest, encodeMessage(reapi.Directory, root.directory).data);
      result.outputDirectories.push({ path: clean, treeDigest: tree.digest, rootDirectoryDigest: root.digest });
    } else if (stat.isFile()) {
      const data = await readFile(full);
      const digest = digestOf(data);
      uploads.addBytes(digest, data);
      result.outputFiles.push({ path: clean, digest, isExecutable: isExecutable(stat.mode) });
    }
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
