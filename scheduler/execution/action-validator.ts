import {
  digestKey,
  FailedPreconditionError,
  InvalidArgumentError,
  isEmptyDigest,
  NotFoundError,
  parseDigest,
  reapi,
  type BlobAccess,
  type Digest,
  type PreconditionViolation,
} from '../../src/core/index.js';
import type { PlatformProperty } from './platform-rules.js';

/** An Action that passed validation, with what the scheduler needs to queue it. */
export interface ValidatedAction {
  readonly actionDigest: Digest;
  readonly action: reapi.Action;
  readonly command: reapi.Command;
  /** Action.platform (REAPI 2.2+) when set, else Command.platform (2.0/2.1 clients). */
  readonly platform: readonly PlatformProperty[];
  readonly timeoutMs: number;
}

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

  violations.push(...(await checkInputRoot(cas, inputRootDigest)));
  if (violations.length > 0) {
    throw new FailedPreconditionError(`${violations.length} blob(s) the action needs are not in the CAS`, violations);
  }
  const platform = (action.platform?.properties.length ? action.platform : command!.platform)?.properties ?? [];
  return { actionDigest, action, command: command!, platform: platform.map((p) => ({ name: p.name, value: p.value })), timeoutMs };
}

function effectiveTimeout(action: reapi.Action, limits: ActionLimits): number {
  if (!action.timeout) return limits.defaultTimeoutMs;
  const ms = action.timeout.seconds * 1000 + Math.floor(action.timeout.nanos / 1e6);
  if (ms < 0 || action.timeout.nanos < 0) throw new InvalidArgumentError('Action.timeout: must not be negative');
  if (ms === 0) return limits.defaultTimeoutMs;
  if (ms > limits.maxTimeoutMs) {
    throw new InvalidArgumentError(`Action.timeout: ${ms / 1000}s is above this server's maximum of ${limits.maxTimeoutMs / 1000}s`);
  }
  return ms;
}

/** A relative path that stays inside the input root once `.` and `..` are resolved (empty = root). */
function checkRelativePath(path: string, field: string, allowEmpty: boolean): void {
  if (path === '' && allowEmpty) return;
  if (path === '' || path.startsWith('/')) throw new InvalidArgumentError(`${field}: ${JSON.stringify(path)} must be a non-empty relative path`);
  let depth = 0;
  for (const part of path.split('/')) {
    if (part === '..') depth--;
    else if (part !== '' && part !== '.') depth++;
    if (depth < 0) throw new InvalidArgumentError(`${field}: ${JSON.stringify(path)} escapes the input root`);
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
  for (const [field, paths] of fields) for (const p of paths) checkRelativePath(p, field, field !== 'Command.output_files');
  for (const v of command.environmentVariables) {
    if (v.name === '' || v.name.includes('=')) throw new InvalidArgumentError(`Command.environment_variables: bad name ${JSON.stringify(v.name)}`);
  }
}

function checkName(name: string, where: string): void {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new InvalidArgumentError(`${where}: bad entry name ${JSON.stringify(name)}`);
  }
}

function checkSorted(names: string[], where: string, kind: string): void {
  for (let i = 1; i < names.length; i++) {
    if (names[i - 1]! === names[i]!) throw new InvalidArgumentError(`${where}: duplicate ${kind} ${JSON.stringify(names[i])}`);
    if (Buffer.compare(Buffer.from(names[i - 1]!), Buffer.from(names[i]!)) > 0) {
      throw new InvalidArgumentError(`${where}: ${kind} are not sorted (${JSON.stringify(names[i - 1])} before ${JSON.stringify(names[i])})`);
    }
  }
}

/** Walks the input tree breadth first; returns the blobs that are missing. */
async function checkInputRoot(cas: BlobAccess, root: Digest): Promise<PreconditionViolation[]> {
  const violations: PreconditionViolation[] = [];
  const files = new Map<string, Digest>();
  const seen = new Set<string>();
  let level: { digest: Digest; path: string }[] = [{ digest: root, path: '' }];
  while (level.length > 0) {
    const next: { digest: Digest; path: string }[] = [];
    const fetched = await Promise.all(level.map(async (d) => ({ ...d, bytes: isEmptyDigest(d.digest) ? Buffer.alloc(0) : await getOrNull(cas, d.digest) })));
    for (const { digest, path, bytes } of fetched) {
      if (!bytes) {
        violations.push(missing(digest, `directory ${JSON.stringify(path || '.')}`));
        continue;
      }
      const where = `input directory ${JSON.stringify(path || '.')} (${digestKey(digest)})`;
      const dir = decode(reapi.Directory, bytes, where);
      const depth = path === '' ? 0 : path.split('/').length;
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
          if (all.has(n)) throw new InvalidArgumentError(`${where}: duplicate entry ${JSON.stringify(n)}`);
          all.add(n);
        }
      }
      for (const f of dir.files) {
        const d = parseDigest(f.digest, `${where}: file ${JSON.stringify(f.name)}`);
        if (!isEmptyDigest(d)) files.set(digestKey(d), d);
      }
      for (const s of dir.symlinks) checkSymlink(s, depth, where);
      for (const sub of dir.directories) {
        const d = parseDigest(sub.digest, `${where}: directory ${JSON.stringify(sub.name)}`);
        // The same directory at another depth resolves its symlinks differently: check it there too.
        const key = `${digestKey(d)}@${depth + 1}`;
        if (seen.has(key)) continue;
        seen.add(key);
        next.push({ digest: d, path: path === '' ? sub.name : `${path}/${sub.name}` });
      }
    }
    level = next;
  }
  const fileDigests = [...files.values()];
  for (let i = 0; i < fileDigests.length; i += 10_000) {
    for (const d of await cas.findMissing(fileDigests.slice(i, i + 10_000))) violations.push(missing(d, 'an input file'));
  }
  return violations;
}

/** A symlink's target, resolved from its directory at `depth`, must stay inside the input root. */
function checkSymlink(s: reapi.SymlinkNode, depth: number, where: string): void {
  if (s.target === '' || s.target.startsWith('/')) {
    throw new InvalidArgumentError(`${where}: symlink ${JSON.stringify(s.name)} -> ${JSON.stringify(s.target)} escapes the input root`);
  }
  let d = depth;
  for (const part of s.target.split('/')) {
    if (part === '..') d--;
    else if (part !== '' && part !== '.') d++;
    if (d < 0) throw new InvalidArgumentError(`${where}: symlink ${JSON.stringify(s.name)} -> ${JSON.stringify(s.target)} escapes the input root`);
  }
}
