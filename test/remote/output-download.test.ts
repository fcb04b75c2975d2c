import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { producedFiles, type OutputKind } from '../../src/actions/index.js';
import { digestOf, reapi, type Digest } from '../../src/core/index.js';
import { downloadOutputs, OutputDownloadError, writeVerifiedChunks, type BlobReader } from '../../src/remote/index.js';

const temps: string[] = [];
afterEach(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kiln-output-download-'));
  temps.push(dir);
  return dir;
}

const file = (path: string, content: string): reapi.OutputFileInit => ({ path, digest: digestOf(Buffer.from(content)), isExecutable: false });
const result = (init: reapi.ActionResultInit) => reapi.ActionResult.decode(reapi.ActionResult.encode(init));
const declared = (entries: Record<string, OutputKind>) => new Map(Object.entries(entries));

/** A CAS in memory; readToFile streams the blob in 100-byte chunks through the real verifying writer. */
function memoryReader(blobs: readonly Buffer[]): BlobReader & { add(data: Buffer): Digest } {
  const byHash = new Map(blobs.map((b) => [digestOf(b).hash, b]));
  const read = async (d: Digest) => byHash.get(d.hash) ?? Buffer.alloc(0);
  return {
    read,
    async readToFile(d: Digest, f: FileHandle) {
      const data = await read(d);
      const chunks = Array.from({ length: Math.ceil(data.length / 100) }, (_, i) => data.subarray(i * 100, i * 100 + 100));
      await writeVerifiedChunks(chunks, d, f);
    },
    add(data: Buffer) {
      byHash.set(digestOf(data).hash, data);
      return digestOf(data);
    },
  };
}

/** A Tree blob of `root` and its `children`, and its digest. */
function treeBlob(root: reapi.DirectoryInit, children: reapi.DirectoryInit[] = []): { data: Buffer; digest: Digest } {
  const data = Buffer.from(reapi.Tree.encode({ root, children }));
  return { data, digest: digestOf(data) };
}
const dirDigest = (d: reapi.DirectoryInit) => digestOf(Buffer.from(reapi.Directory.encode(d)));

/** Every file below `dir` with its content (symlinks as `-> target`), to compare a tree before and after. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (at: string, prefix: string) => {
    for (const e of await readdir(at, { withFileTypes: true })) {
      const path = `${prefix}${e.name}`;
      if (e.isSymbolicLink()) out[path] = `-> ${await readlink(join(at, e.name))}`;
      else if (e.isDirectory()) await walk(join(at, e.name), `${path}/`);
      else out[path] = await readFile(join(at, e.name), 'utf8');
    }
  };
  await walk(dir, '');
  return out;
}

const good = Buffer.from('good\n');
const BIN = 'bazel-out/k8-fastbuild/bin';

describe('downloadOutputs: what a result may name', () => {
  it('writes only declared outputs at clean relative paths', async () => {
    const root = await tempDir();
    const reader = memoryReader([good]);
    const only = declared({ 'out/a.txt': 'file' });
    await expect(downloadOutputs(result({ outputFiles: [file('out/b.txt', 'good\n')] }), root, only, reader)).rejects.toThrow(
      /'out\/b.txt', which the action does not declare/,
    );
    await expect(
      downloadOutputs(result({ outputFiles: [file('../escape.txt', 'good\n')] }), root, declared({ '../escape.txt': 'file' }), reader),
    ).rejects.toThrow(/not a clean relative path/);
    await expect(downloadOutputs(result({ outputFiles: [file('out//a.txt', 'good\n')] }), root, declared({ 'out//a.txt': 'file' }), reader)).rejects.toThrow(
      /not a clean relative path/,
    );
    expect(await readdir(root)).toEqual([]);
    const written = await downloadOutputs(result({ outputFiles: [file('out/a.txt', 'good\n')] }), root, only, reader, { executable: true });
    expect(written).toEqual([{ path: 'out/a.txt', digest: digestOf(good), isExecutable: true }]);
    expect(await readFile(join(root, 'out/a.txt'), 'utf8')).toBe('good\n');
  });

  it.each([
    ['a file where a directory is declared', { outputFiles: [file('o', 'good\n')] }, 'directory', /output file 'o', which the action declares as a directory/],
    [
      'a directory where a file is declared',
      { outputDirectories: [{ path: 'o', treeDigest: treeBlob({}).digest }] },
      'file',
      /output directory 'o', which the action declares as a file/,
    ],
    ['a symlink where a file is declared', { outputSymlinks: [{ path: 'o', target: 'x' }] }, 'file', /output symlink 'o', which the action declares as a file/],
    [
      'a symlink where a directory is declared',
      { outputDirectorySymlinks: [{ path: 'o', target: '../../pkg' }] },
      'directory',
      /output symlink 'o', which the action declares as a directory/,
    ],
    ['a file where a symlink is declared', { outputFiles: [file('o', 'good\n')] }, 'symlink', /output file 'o', which the action declares as a symlink/],
  ] as [string, reapi.ActionResultInit, OutputKind, RegExp][])('refuses %s, writing nothing', async (_, init, kind, message) => {
    const root = await tempDir();
    await expect(downloadOutputs(result(init), root, declared({ o: kind }), memoryReader([good, treeBlob({}).data]))).rejects.toThrow(message);
    expect(await readdir(root)).toEqual([]);
  });

  it('refuses one path named twice as different outputs, and takes one symlink listed in two fields once', async () => {
    const root = await tempDir();
    const reader = memoryReader([good]);
    const twice = declared({ o: 'file' });
    await expect(downloadOutputs(result({ outputFiles: [file('o', 'good\n'), file('o', 'good\n')] }), root, twice, reader)).rejects.toThrow(/names 'o' twice/);
    const link = declared({ l: 'symlink' });
    await expect(
      downloadOutputs(result({ outputSymlinks: [{ path: 'l', target: 'a' }], outputFileSymlinks: [{ path: 'l', target: 'b' }] }), root, link, reader),
    ).rejects.toThrow(/names 'l' twice/);
    expect(await readdir(root)).toEqual([]);
    const outputs = await downloadOutputs(
      result({ outputSymlinks: [{ path: 'l', target: 'a' }], outputFileSymlinks: [{ path: 'l', target: 'a' }] }),
      root,
      link,
      reader,
    );
    expect(outputs).toEqual([{ kind: 'symlink', path: 'l', target: 'a' }]);
    expect(await readlink(join(root, 'l'))).toBe('a');
  });

  it('refuses a file and a symlink at one path', async () => {
    const root = await tempDir();
    const init = { outputFiles: [file('o', 'good\n')], outputFileSymlinks: [{ path: 'o', target: '../../../../pkg/BUILD' }] };
    await expect(downloadOutputs(result(init), root, declared({ o: 'file' }), memoryReader([good]))).rejects.toThrow(
      /output symlink 'o', which the action declares as a file/,
    );
    await expect(downloadOutputs(result(init), root, declared({ o: 'symlink' }), memoryReader([good]))).rejects.toThrow(
      /output file 'o', which the action declares as a symlink/,
    );
    expect(await readdir(root)).toEqual([]);
  });

  it('refuses an output inside another output', async () => {
    const root = await tempDir();
    const init = { outputFiles: [file('a', 'good\n'), file('a/b', 'good\n')] };
    await expect(downloadOutputs(result(init), root, declared({ a: 'file', 'a/b': 'file' }), memoryReader([good]))).rejects.toThrow(
      /'a\/b' inside the output 'a'/,
    );
  });

  it('never writes into the source tree through a tree artifact listed again as a symlink to it (the probe)', async () => {
    // The execroot's pkg is the workspace's package, as prepareExecRoot links it.
    const base = await tempDir();
    const workspace = join(base, 'workspace');
    const execRoot = join(base, 'execroot');
    await mkdir(join(workspace, 'pkg'), { recursive: true });
    await writeFile(join(workspace, 'pkg/BUILD'), 'genrule()\n');
    await mkdir(execRoot);
    await symlink(join(workspace, 'pkg'), join(execRoot, 'pkg'));
    const before = await snapshot(workspace);
    const overwrite = Buffer.from('overwritten\n');
    const tree = treeBlob({ files: [{ name: 'BUILD', digest: digestOf(overwrite) }] });
    const reader = memoryReader([overwrite, tree.data]);
    const path = `${BIN}/pkg/t_d`;
    const init = { outputDirectories: [{ path, treeDigest: tree.digest }], outputSymlinks: [{ path, target: '../../../../pkg' }] };
    await expect(downloadOutputs(result(init), execRoot, declared({ [path]: 'directory' }), reader)).rejects.toThrow(OutputDownloadError);
    await expect(downloadOutputs(result(init), execRoot, declared({ [path]: 'symlink' }), reader)).rejects.toThrow(/output directory .* declares as a symlink/);
    expect(await snapshot(workspace)).toEqual(before);
    // The directory alone is fine, and lands in the output tree.
    await downloadOutputs(result({ outputDirectories: init.outputDirectories }), execRoot, declared({ [path]: 'directory' }), reader);
    expect(await readFile(join(execRoot, path, 'BUILD'), 'utf8')).toBe('overwritten\n');
    expect(await snapshot(workspace)).toEqual(before);
  });
});

describe('writeProducedOutputs (through downloadOutputs): symlinks already in the execroot', () => {
  it('replaces a symlink where a parent directory of an output should be, never writing through it', async () => {
    const base = await tempDir();
    const outside = join(base, 'outside');
    const root = join(base, 'root');
    await mkdir(outside);
    await writeFile(join(outside, 'out.txt'), 'precious\n');
    await mkdir(join(root, 'bazel-out/k8-fastbuild'), { recursive: true });
    // Planted before the write: bin/ itself, and deeper, a package directory.
    await symlink(outside, join(root, 'bazel-out/k8-fastbuild/bin'));
    const tree = treeBlob({ files: [{ name: 'f', digest: digestOf(good) }] });
    const reader = memoryReader([good, tree.data]);
    const init = { outputFiles: [file(`${BIN}/pkg/out.txt`, 'good\n')], outputDirectories: [{ path: `${BIN}/pkg/t_d`, treeDigest: tree.digest }] };
    await downloadOutputs(result(init), root, declared({ [`${BIN}/pkg/out.txt`]: 'file', [`${BIN}/pkg/t_d`]: 'directory' }), reader);
    expect(await snapshot(outside)).toEqual({ 'out.txt': 'precious\n' });
    expect((await lstat(join(root, BIN))).isDirectory()).toBe(true);
    expect(await snapshot(join(root, BIN))).toEqual({ 'pkg/out.txt': 'good\n', 'pkg/t_d/f': 'good\n' });

    await rm(join(root, BIN, 'pkg'), { recursive: true });
    await symlink(outside, join(root, BIN, 'pkg'));
    await downloadOutputs(result(init), root, declared({ [`${BIN}/pkg/out.txt`]: 'file', [`${BIN}/pkg/t_d`]: 'directory' }), reader);
    expect(await snapshot(outside)).toEqual({ 'out.txt': 'precious\n' });
    expect((await lstat(join(root, BIN, 'pkg'))).isDirectory()).toBe(true);
  });

  it('replaces a symlink at the output path and at its temporary name, for small and large files', async () => {
    const base = await tempDir();
    const outside = join(base, 'outside');
    const root = join(base, 'root');
    await mkdir(outside);
    await mkdir(join(root, 'out'), { recursive: true });
    await writeFile(join(outside, 'victim'), 'precious\n');
    const large = Buffer.alloc(300 * 1024, 'large\n');
    const reader = memoryReader([good, large]);
    for (const name of ['small', 'large']) {
      await symlink(join(outside, 'victim'), join(root, 'out', name));
      await symlink(join(outside, 'victim'), join(root, 'out', `${name}.kiln-download-${process.pid}`));
    }
    const init = { outputFiles: [file('out/small', 'good\n'), { path: 'out/large', digest: digestOf(large), isExecutable: true }] };
    await downloadOutputs(result(init), root, declared({ 'out/small': 'file', 'out/large': 'file' }), reader);
    expect(await readFile(join(outside, 'victim'), 'utf8')).toBe('precious\n');
    expect(await readFile(join(root, 'out/small'), 'utf8')).toBe('good\n');
    expect((await readFile(join(root, 'out/large'))).equals(large)).toBe(true);
    expect((await lstat(join(root, 'out/large'))).mode & 0o777).toBe(0o755);
    expect((await readdir(join(root, 'out'))).sort()).toEqual(['large', 'small']);
  });

  it('replaces whatever is at an output path (a stale file, a directory), makes missing directories, and sets the mode whatever the umask', async () => {
    const root = await tempDir();
    await mkdir(join(root, 'out/dir/inside'), { recursive: true });
    await writeFile(join(root, 'out/stale.txt'), 'stale\n');
    const kinds = declared({ 'out/stale.txt': 'file', 'out/dir': 'file', 'new/deep/a.txt': 'file' });
    const init = { outputFiles: [file('out/stale.txt', 'good\n'), file('out/dir', 'good\n'), { ...file('new/deep/a.txt', 'good\n'), isExecutable: true }] };
    const umask = process.umask(0o077);
    try {
      await downloadOutputs(result(init), root, kinds, memoryReader([good]));
    } finally {
      process.umask(umask);
    }
    for (const [path, mode] of [
      ['out/stale.txt', 0o644],
      ['out/dir', 0o644],
      ['new/deep/a.txt', 0o755],
    ] as const) {
      expect(await readFile(join(root, path), 'utf8')).toBe('good\n');
      expect((await stat(join(root, path))).mode & 0o777).toBe(mode);
    }
    expect((await readdir(join(root, 'out'))).sort()).toEqual(['dir', 'stale.txt']);
  });

  it('writes an output directory from its Tree, its symlinks last', async () => {
    const root = await tempDir();
    const sub: reapi.DirectoryInit = { files: [{ name: 'f.txt', digest: digestOf(good) }] };
    const tree = treeBlob({ directories: [{ name: 'sub', digest: dirDigest(sub) }], symlinks: [{ name: 'link', target: 'sub/f.txt' }] }, [sub]);
    const outputs = await downloadOutputs(
      result({ outputDirectories: [{ path: 'd', treeDigest: tree.digest }] }),
      root,
      declared({ d: 'directory' }),
      memoryReader([good, tree.data]),
    );
    expect(producedFiles(outputs).map((f) => f.path)).toEqual(['d/sub/f.txt']);
    expect(outputs[0]).toMatchObject({ kind: 'tree', path: 'd', tree: { directories: ['sub'], symlinks: [{ path: 'link', target: 'sub/f.txt' }] } });
    expect(await readFile(join(root, 'd/link'), 'utf8')).toBe('good\n');
  });
});

describe('downloadOutputs: blobs that are not what their digest says', () => {
  it('refuses small bytes that do not match the digest', async () => {
    const root = await tempDir();
    const lying: BlobReader = { read: async () => Buffer.from('bad\n'), readToFile: () => Promise.reject(new Error('not used')) };
    await expect(downloadOutputs(result({ outputFiles: [file('a', 'good\n')] }), root, declared({ a: 'file' }), lying)).rejects.toThrow(
      /output file 'a': .*does not match its digest/,
    );
    expect(await readdir(root)).toEqual([]);
  });

  it.each([
    ['short', (b: Buffer) => b.subarray(0, b.length - 1), /holds 307199 bytes, not the 307200/],
    ['long', (b: Buffer) => Buffer.concat([b, Buffer.from('x')]), /more than the 307200 bytes/],
    ['different', (b: Buffer) => Buffer.from(b).fill('y', 0, 1), /does not match its digest/],
  ])('refuses a %s large blob streamed to its file, leaving no file behind', async (_, corrupt, message) => {
    const root = await tempDir();
    const large = Buffer.alloc(300 * 1024, 'large\n');
    const reader = memoryReader([]);
    const lying: BlobReader = {
      read: reader.read,
      readToFile: (d, f) => writeVerifiedChunks([corrupt(large)], d, f),
    };
    const init = { outputFiles: [{ path: 'a', digest: digestOf(large), isExecutable: false }] };
    await expect(downloadOutputs(result(init), root, declared({ a: 'file' }), lying)).rejects.toThrow(message);
    expect(await readdir(root)).toEqual([]);
  });
});
