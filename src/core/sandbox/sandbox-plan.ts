import { copyFileSync, existsSync, lstatSync, mkdirSync, readlinkSync, symlinkSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import type { ProcessSpec, SandboxTree } from './process-runner.js';

/**
 * What a sandbox holds, as steps applied in order to an empty root: the one description both
 * sandboxes build from (bwrap as its arguments, kiln-spawn's native sandbox as its request).
 * Paths `at` are inside the sandbox; `from` is a host path (binds) or a symlink's target.
 */
export type SandboxStep =
  | { readonly kind: 'ro-bind' | 'bind'; readonly from: string; readonly at: string }
  | {
      readonly kind: 'symlink';
      readonly from: string;
      readonly at: string;
      /** It lies under a writable host mount: the runner removes it when the process ends. */
      readonly onHost?: { readonly path: string };
    }
  /**
   * `tmpfs` may be a directory of the sandbox root's own memory (it is private and ends with the
   * sandbox: /tmp); `tmpfs-mount` is a tmpfs mounted there, for paths that may lie under a
   * read-only bind (`--sandbox_tmpfs_path`).
   */
  | { readonly kind: 'dir' | 'tmpfs' | 'tmpfs-mount' | 'proc' | 'dev'; readonly at: string };

/** Read-only system directories: enough for bash, coreutils and dynamically linked tools. */
const SYSTEM_DIRECTORIES = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** The few files of /etc that programs need to start and to name users; nothing else of /etc. */
const ETC_FILES = ['/etc/passwd', '/etc/group', '/etc/nsswitch.conf', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/localtime', '/etc/alternatives'];

/** Those of ETC_FILES that are directories: mounted whole over the prepared /etc's empty ones. */
const ETC_DIRECTORIES = ETC_FILES.filter((path) => lstatSync(path, { throwIfNoEntry: false })?.isDirectory());

/**
 * Copies the /etc files the sandbox shows into `dir`, for `etcDirectory` (a symlink stays a symlink;
 * a directory, /etc/alternatives and its hundreds of links, is left as an empty mount point that
 * sandboxSteps mounts over). A copy taken once per build: an /etc changed meanwhile shows from the
 * next build.
 */
export function prepareSandboxEtc(dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const file of ETC_FILES) {
    const st = lstatSync(file, { throwIfNoEntry: false });
    const copy = join(dir, basename(file));
    if (st?.isSymbolicLink()) symlinkSync(readlinkSync(file), copy);
    else if (st?.isDirectory()) mkdirSync(copy);
    else if (st?.isFile()) copyFileSync(file, copy);
  }
  return dir;
}

/**
 * The sandbox of one process: its own /proc, a minimal /dev and a private /tmp; the system
 * directories and a few /etc files read-only (`etcDirectory`, made by prepareSandboxEtc, is one
 * mount where binding the files one by one costs a mount each); the spec's read-only paths, then
 * its writable ones and its working directory (unless it has a tree), each at its host path; its
 * tmpfs paths; then its tree. Writable binds come after read-only ones so that they win over a
 * parent's, and a tmpfs hides whatever was mounted at or below it.
 */
export function sandboxSteps(spec: ProcessSpec, etcDirectory?: string): SandboxStep[] {
  const steps = [...systemSteps(etcDirectory)];
  for (const path of spec.readOnlyPaths ?? []) steps.push({ kind: 'ro-bind', from: absolute(path, 'readOnlyPaths'), at: path });
  for (const path of [...(spec.writablePaths ?? []), ...(spec.tree ? [] : [spec.cwd])]) {
    steps.push({ kind: 'bind', from: absolute(path, 'writablePaths'), at: path });
  }
  for (const path of spec.tmpfsPaths ?? []) steps.push({ kind: 'tmpfs-mount', at: absolute(path, 'tmpfsPaths') });
  if (spec.tree) for (const step of treeSteps(spec.tree)) steps.push(step);
  return steps;
}

const systemStepsByEtc = new Map<string, readonly SandboxStep[]>();

/** The steps every sandbox starts with, looked up on the host once per process and /etc choice. */
function systemSteps(etcDirectory?: string): readonly SandboxStep[] {
  const cached = systemStepsByEtc.get(etcDirectory ?? '');
  if (cached) return cached;
  const steps: SandboxStep[] = [
    { kind: 'proc', at: '/proc' },
    { kind: 'dev', at: '/dev' },
    { kind: 'tmpfs', at: '/tmp' },
  ];
  for (const dir of SYSTEM_DIRECTORIES) {
    const stat = lstatSync(dir, { throwIfNoEntry: false });
    // On merged-/usr systems /bin, /lib... are symlinks into /usr: recreate the link, do not bind.
    if (stat?.isSymbolicLink()) steps.push({ kind: 'symlink', from: readlinkSync(dir), at: dir });
    else if (stat) steps.push({ kind: 'ro-bind', from: dir, at: dir });
  }
  if (etcDirectory) {
    steps.push({ kind: 'ro-bind', from: etcDirectory, at: '/etc' });
    for (const dir of ETC_DIRECTORIES) if (existsSync(dir)) steps.push({ kind: 'ro-bind', from: dir, at: dir });
  } else for (const file of ETC_FILES) if (existsSync(file)) steps.push({ kind: 'ro-bind', from: file, at: file });
  systemStepsByEtc.set(etcDirectory ?? '', steps);
  return steps;
}

/** Made in the sandbox's own root (parents included), in order: mounts, dirs, symlinks. */
function treeSteps(tree: SandboxTree): SandboxStep[] {
  const steps: SandboxStep[] = [];
  for (const m of tree.mounts) steps.push({ kind: 'bind', from: absolute(m.host, 'tree mounts'), at: absolute(m.at, 'tree mounts') });
  for (const dir of tree.dirs) steps.push({ kind: 'dir', at: absolute(dir, 'tree dirs') });
  for (const link of tree.symlinks) {
    const at = absolute(link.path, 'tree symlinks');
    const mount = tree.mounts.find((m) => at.startsWith(`${m.at}/`));
    const onHost = mount && { path: mount.host + at.slice(mount.at.length) };
    steps.push({ kind: 'symlink', from: link.target, at, ...(onHost ? { onHost } : {}) });
  }
  return steps;
}

function absolute(path: string, field: string): string {
  if (!isAbsolute(path)) throw new TypeError(`sandbox ${field} must be absolute paths, got '${path}'`);
  return path;
}
