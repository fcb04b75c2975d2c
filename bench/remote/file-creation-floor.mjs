#!/usr/bin/env node
// The kernel's floor under a fully cached build after `kiln clean`: the time to create the build's
// output files, with nothing else done, in the two states a file system can be in. "quiet": nothing was
// deleted nearby lately. "after a clean": a tree of twice as many files (the previous build's outputs and
// execroot) was just deleted at the same paths, as `kiln clean` does right before the cached build.
// Files are created with synchronous writeFileSync calls from one thread, the cheapest way Node has; a
// build that downloads every output cannot create them faster than this.
//
//   node bench/remote/file-creation-floor.mjs [--packages=1000] [--files-per-package=11] [--dir=DIR]
//
// DIR (default: a new directory under the system's temporary directory) should be on the file system of
// the output base. The "quiet" figure means what it says only when nothing was deleted on that file system
// in the last few minutes (ext4 without a journal skips inodes freed in the last 60-300 s).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const flags = { packages: 1000, 'files-per-package': 11, dir: '' };
for (const a of process.argv.slice(2)) {
  const m = /^--(packages|files-per-package|dir)=(.+)$/.exec(a);
  if (!m) throw new Error(`unknown argument ${a}`);
  flags[m[1]] = m[2];
}
const packages = Number(flags.packages);
const perPackage = Number(flags['files-per-package']);
const root = mkdtempSync(join(flags.dir || tmpdir(), 'kiln-file-floor-'));

/** The output directory of package `i`, shaped as Kiln's execroot lays it out. */
const packageDir = (tree, i) =>
  join(root, tree, 'bazel-out/k8-fastbuild/bin', `g${String(Math.floor(i / 100)).padStart(2, '0')}`, `pkg${String(i).padStart(5, '0')}`);

function createTree(tree, filesPerPackage) {
  const body = Buffer.from('package output\n');
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < packages; i++) {
    const dir = packageDir(tree, i);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < filesPerPackage; f++) writeFileSync(join(dir, `out${f}.txt`), body);
  }
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function report(name, ms) {
  const files = packages * perPackage;
  console.log(`  ${name.padEnd(14)} ${files} files in ${(ms / 1000).toFixed(2)} s (${((ms * 1000) / files).toFixed(0)} us per file)`);
}

/** The file system holding the tree, and for ext4 whether it has a journal (a jbd2 entry for its device). */
function describeFileSystem() {
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' '));
  const mount = mounts.filter((m) => m.length > 2 && root.startsWith(m[1])).sort((a, b) => b[1].length - a[1].length)[0];
  if (!mount) return 'unknown';
  const [device, point, type] = mount;
  if (type !== 'ext4') return `${type} on ${device} (${point})`;
  const journals = existsSync('/proc/fs/jbd2') ? readdirSync('/proc/fs/jbd2') : [];
  const journaled = journals.some((j) => j.startsWith(`${device.replace('/dev/', '')}-`));
  return `ext4 on ${device} (${point}), ${journaled ? 'with' : 'without'} a journal`;
}

console.log(`file creation floor: ${packages} packages x ${perPackage} files under ${root}`);
console.log(`  file system: ${describeFileSystem()}`);
try {
  report('quiet', createTree('quiet', perPackage));
  createTree('previous', perPackage * 2);
  rmSync(join(root, 'previous'), { recursive: true });
  report('after a clean', createTree('previous', perPackage));
} finally {
  rmSync(root, { recursive: true, force: true });
}
