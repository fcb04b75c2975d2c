import {
  digestKey,
  FailedPreconditionError,
  InvalidArgumentError,
  isEmptyDigest,
  msFromDuration,
  NotFoundError,
  parseDigest,
  reapi,
  type Digest,
  type PreconditionViolation,
} from '../../src/core/index.js';
import type { BlobAccess } from '../../src/core/blobstore/index.js';
import { checkSymlinkTarget, SymlinkResolver } from './input-symlinks.js';
import type { PlatformProperty } from './platform-rules.js';

/** An Action that passed validation, with what the scheduler needs to queue it. */
export interface ValidatedAction {
  readonly actionDigest: Digest;
  readonly action: reapi.Action;
  readonly command: reapi.Command;
  /** Action.platform (REAPI 2.2+) when set, else Command.platform (2.0/2.1 clients). */
  readonly platform: readonly PlatformProperty[];
  readonly timeoutMs: number;
  /**
   * The input tree's Directory blobs as read here (breadth first, each once, up to
   * INPUT_DIRECTORIES_BUDGET bytes), handed to the executor with the assignment so it need not read
   * them again. Absent: none kept.
   */
  readonly inputDirectories?: readonly Buffer[];
}

/**
 * Bytes of Directory blobs an assignment carries: a typical tree whole (a few KiB), and a few
 * assignments per Synchronize answer stay well under gRPC's 4 MiB message limit.
 */
export const INPUT_DIRECTORIES_BUDGET = 256 * 1024;

export interface ActionLimits {
  /** Used when Action.timeout is unset. */
  readonly defaultTimeoutMs: number;
  /** A larger Action.timeout is INVALID_ARGUMENT. */
  readonly maxTimeoutMs: number;
}

const missing = (d: Digest, what: string): PreconditionViolation => ({
  type: 'MISSING',
  subject: `blobs/${d.hash}/${d.sizeBytes}`,
  description: `${what} is not in the CAS`,
});

export async function getOrNull(cas: BlobAccess, digest: Digest): Promise<Buffer | null> {
  try {
    return await cas.get(digest);
  } catch (e) {
    if (e instanceof NotFoundError) return null;
    throw e;
  }
}

function decode<T>(codec: { decode(b: Buffer): T }, data: Buffer, what: string): T {
  try {
    return codec.decode(data);
  } catch (e) {
    throw new InvalidArgumentError(`${what} is not a valid message: ${(e as Error).message}`);
  }
}

/**
 * Fetches and checks an Action before it is queued, so an executor never receives work that cannot
 * run: the Action, its Command and the whole input tree must be in the CAS (else FAILED_PRECONDITION
 * listing every missing blob as `MISSING` / `blobs/{hash}/{size}`), and well formed (else
 * INVALID_ARGUMENT naming the field or the directory). `actionBytes`: the Action as the caller
 * already read it from `cas` (null: it was missing), so it is not read twice.
 */
export async function validateAction(cas: BlobAccess, actionDigest: Digest, limits: ActionLimits, actionBytes?: Buffer | null): Promise<ValidatedAction> {
  if (actionBytes === undefined) actionBytes = await getOrNull(cas, actionDigest);
  if (!actionBytes) throw new FailedPreconditionError(`action ${digestKey(actionDigest)} is not in the CAS`, [missing(actionDigest, 'the Action')]);
  const action = decode(reapi.Action, actionBytes, 'action_digest: the Action');
  const commandDigest = parseDigest(action.commandDigest, 'Action.command_digest');
  const inputRootDigest = parseDigest(action.inputRootDigest, 'Action.input_root_digest');
  const timeoutMs = effectiveTimeout(action, limits);

  const violations: PreconditionViolation[] = [];
  const commandBytes = await getOrNull(cas, commandDigest);
  if (!commandBytes) violations.push(missing(commandDigest, 'the Command'));
  const command = commandBytes ? decode(reapi.Command, commandBytes, 'Action.command_digest: the Command') : undefined;
  if (command) checkCommand(command);

  const inputDirectories: Buffer[] = [];
  for (const violation of await checkInputRoot(cas, inputRootDigest, inputDirectories)) violations.push(violation);
  if (violations.length > 0) {
    throw new FailedPreconditionError(`${violations.length} blob(s) the action needs are not in the CAS`, violations);
  }
  const platform = (action.platform?.properties.length ? action.platform : command!.platform)?.properties ?? [];
  return { actionDigest, action, command: command!, platform: platform.map((p) => ({ name: p.name, value: p.value })), timeoutMs, inputDirectories };
}

function effectiveTimeout(action: reapi.Action, limits: ActionLimits): number {
  if (!action.timeout) return limits.defaultTimeoutMs;
  const ms = msFromDuration(action.timeout, 'Action.timeout');
  if (ms < 0) throw new InvalidArgumentError('Action.timeout: must not be negative');
  if (ms === 0) return limits.defaultTimeoutMs;
  if (ms > limits.maxTimeoutMs) {
    throw new InvalidArgumentError(`Action.timeout: ${ms / 1000}s is above this server's maximum of ${limits.maxTimeoutMs / 1000}s`);
  }
  return ms;
}

/** Entry names and paths quoted in messages are cut to this many characters. */
const QUOTED_CHARS = 120;

/** `text` as a JSON string, cut in the middle when long: a message stays short whatever the client sent. */
function quote(text: string): string {
  if (text.length <= QUOTED_CHARS) return JSON.stringify(text);
  const half = QUOTED_CHARS / 2;
  return `${JSON.stringify(text.slice(0, half))}…${JSON.stringify(text.slice(-half))} (${text.length} characters)`;
}

/**
 * Directories an input tree may nest: every input path must fit Linux's PATH_MAX (4,096 bytes) under
 * an executor's build directory, which 2 bytes a level ("a/") exhaust at ~2,000; Bazel's deepest
 * trees are a few dozen levels.
 */
const MAX_INPUT_TREE_DEPTH = 512;
/** Bytes of an input path below the input root; the rest of PATH_MAX is the build directory's own path. */
const MAX_INPUT_PATH_BYTES = 3072;

/**
 * A path in REAPI's form (working directory, output paths): relative, `/`-separated, no empty,
 * `.` or `..` component (so no leading or trailing slash, no `a//b`); empty only where allowed.
 */
function checkRelativePath(path: string, field: string, allowEmpty: boolean): void {
  if (path === '' && allowEmpty) return;
  const bad = (why: string) => new InvalidArgumentError(`${field}: ${quote(path)} ${why}`);
  if (path === '') throw bad('must be a non-empty relative path');
  if (path.startsWith('/')) throw bad('must be relative (REAPI: no leading slash)');
  if (path.endsWith('/')) throw bad('must not end with a slash');
  if (path.includes('\0')) throw bad('contains a NUL character');
  for (const part of path.split('/')) {
    if (part === '') throw bad('has an empty component (a double slash)');
    if (part === '.' || part === '..') throw bad(`has a '${part}' component; REAPI paths are normalised and stay below the working directory`);
  }
}

/** REAPI: sorted by UTF-8 bytes, without duplicates. */
function checkSortedUnique(values: readonly string[], field: string): void {
  for (let i = 1; i < values.length; i++) {
    const order = Buffer.compare(Buffer.from(values[i - 1]!), Buffer.from(values[i]!));
    if (order === 0) throw new InvalidArgumentError(`${field}: ${quote(values[i]!)} is listed twice`);
    if (order > 0)
      throw new InvalidArgumentError(`${field}: not sorted (${quote(values[i - 1]!)} comes before ${quote(values[i]!)}); REAPI requires byte order`);
  }
}

function checkCommand(command: reapi.Command): void {
  if (command.arguments.length === 0) throw new InvalidArgumentError('Command.arguments: must name the program to run');
  checkRelativePath(command.workingDirectory, 'Command.working_directory', true);
  const fields: [string, string[]][] = [
    ['Command.output_files', command.outputFiles],
    ['Command.output_directories', command.outputDirectories],
    ['Command.output_paths', command.outputPaths],
  ];
  for (const [field, paths] of fields) {
    // '' (the working directory itself) is allowed for directories by REAPI; never for a file.
    for (const p of paths) checkRelativePath(p, field, field !== 'Command.output_files');
    checkSortedUnique(paths, field);
  }
  const directories = new Set(command.outputDirectories);
  const files = new Set(command.outputFiles);
  for (const file of command.outputFiles) {
    if (directories.has(file)) throw new InvalidArgumentError(`Command.output_files: ${quote(file)} is also an output directory`);
    // A file cannot be the parent of another output file.
    for (let slash = file.indexOf('/'); slash >= 0; slash = file.indexOf('/', slash + 1)) {
      if (files.has(file.slice(0, slash)))
        throw new InvalidArgumentError(`Command.output_files: ${quote(file.slice(0, slash))} is a parent of output file ${quote(file)}`);
    }
  }
  const names: string[] = [];
  for (const v of command.environmentVariables) {
    if (v.name === '' || v.name.includes('=') || v.name.includes('\0'))
      throw new InvalidArgumentError(`Command.environment_variables: bad name ${quote(v.name)}`);
    names.push(v.name);
  }
  checkSortedUnique(names, 'Command.environment_variables');
}

function checkName(name: string, where: string): void {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new InvalidArgumentError(`${where}: bad entry name ${quote(name)}`);
  }
}

function checkSorted(names: string[], where: string, kind: string): void {
  for (let i = 1; i < names.length; i++) {
    if (names[i - 1]! === names[i]!) throw new InvalidArgumentError(`${where}: duplicate ${kind} ${quote(names[i]!)}`);
    if (Buffer.compare(Buffer.from(names[i - 1]!), Buffer.from(names[i]!)) > 0) {
      throw new InvalidArgumentError(`${where}: ${kind} are not sorted (${quote(names[i - 1]!)} before ${quote(names[i]!)})`);
    }
  }
}

/** Walks the input tree breadth first; returns the blobs that are missing. Directory blobs read are added to `kept` within its budget. */
async function checkInputRoot(cas: BlobAccess, root: Digest, kept: Buffer[]): Promise<PreconditionViolation[]> {
  let keptBytes = 0;
  const violations: PreconditionViolation[] = [];
  const files = new Map<string, Digest>();
  const seen = new Set<string>();
  const directories = new Map<string, reapi.Directory>();
  const directoryDigests: Digest[] = [];
  /** Targets with a '..' after a name: resolved through the tree once it is all read. */
  const toResolve: { dir: reapi.Directory; target: string; refuse: (why: string) => Error }[] = [];
  let level: { digest: Digest; path: string }[] = [{ digest: root, path: '' }];
  for (let depth = 0; level.length > 0; depth++) {
    if (depth > MAX_INPUT_TREE_DEPTH) {
      throw new InvalidArgumentError(`the input tree nests directories deeper than ${MAX_INPUT_TREE_DEPTH} levels (at ${quote(level[0]!.path)})`);
    }
    const next: { digest: Digest; path: string }[] = [];
    const fetched = await Promise.all(level.map(async (d) => ({ ...d, bytes: isEmptyDigest(d.digest) ? Buffer.alloc(0) : await getOrNull(cas, d.digest) })));
    for (const { digest, path, bytes } of fetched) {
      if (!bytes) {
        violations.push(missing(digest, `directory ${quote(path || '.')}`));
        continue;
      }
      const where = `input directory ${quote(path || '.')} (${digestKey(digest)})`;
      const dir = decode(reapi.Directory, bytes, where);
      const all = new Set<string>();
      const kinds: [string, string[]][] = [
        ['files', dir.files.map((f) => f.name)],
        ['directories', dir.directories.map((d) => d.name)],
        ['symlinks', dir.symlinks.map((s) => s.name)],
      ];
      for (const [kind, names] of kinds) {
        checkSorted(names, where, kind);
        for (const n of names) {
          checkName(n, where);
          if (all.has(n)) throw new InvalidArgumentError(`${where}: duplicate entry ${quote(n)}`);
          all.add(n);
          const bytesBelowRoot = Buffer.byteLength(path) + 1 + Buffer.byteLength(n);
          if (bytesBelowRoot > MAX_INPUT_PATH_BYTES) {
            throw new InvalidArgumentError(
              `${where}: the path of ${quote(n)} is ${bytesBelowRoot} bytes long, above this server's limit of ${MAX_INPUT_PATH_BYTES}`,
            );
          }
        }
      }
      for (const f of dir.files) {
        const d = parseDigest(f.digest, `${where}: file ${quote(f.name)}`);
        if (!isEmptyDigest(d)) files.set(digestKey(d), d);
      }
      if (!directories.has(digestKey(digest)) && !isEmptyDigest(digest)) directoryDigests.push(digest);
      if (!directories.has(digestKey(digest)) && bytes.length > 0 && keptBytes + bytes.length <= INPUT_DIRECTORIES_BUDGET) {
        kept.push(bytes);
        keptBytes += bytes.length;
      }
      directories.set(digestKey(digest), dir);
      for (const s of dir.symlinks) {
        const refuse = (why: string) => new InvalidArgumentError(`${where}: symlink ${quote(s.name)} -> ${quote(s.target)} ${why}`);
        if (checkSymlinkTarget(s.target, depth, refuse) === 'resolve') toResolve.push({ dir, target: s.target, refuse });
      }
      for (const sub of dir.directories) {
        const d = parseDigest(sub.digest, `${where}: directory ${quote(sub.name)}`);
        const subPath = path === '' ? sub.name : `${path}/${sub.name}`;
        // Symlinks are checked against their depth and names against the path's length: the same
        // directory is walked again where either differs.
        const key = `${digestKey(d)}@${depth + 1}@${Buffer.byteLength(subPath)}`;
        if (seen.has(key)) continue;
        seen.add(key);
        next.push({ digest: d, path: subPath });
      }
    }
    level = next;
  }
  if (violations.length === 0) {
    const resolver = new SymlinkResolver(directories);
    for (const { dir, target, refuse } of toResolve) resolver.check(dir, target, refuse);
  }
  // The directories, read above, are asked about too: the lookup pins the whole input tree (the CAS
  // stack's PinningBlobAccess), so a bounded store keeps it while the action is queued and runs.
  const lookedUp = [...files.values(), ...directoryDigests];
  for (let i = 0; i < lookedUp.length; i += 10_000) {
    for (const d of await cas.findMissing(lookedUp.slice(i, i + 10_000))) {
      violations.push(missing(d, directories.has(digestKey(d)) ? 'an input directory' : 'an input file'));
    }
  }
  return violations;
}
