import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { delimitedRecord, spawnLog, zstdCompress } from '../../core/index.js';
import type { ActionRecord } from './action-records.js';

type SpawnExecInit = spawnLog.SpawnExecInit;
type FileInit = spawnLog.FileInit;

/** What a spawn saw beyond the action itself: the environment it ran with. */
export interface SpawnContext {
  readonly execRoot: string;
  /** The environment every action starts from (PATH, --action_env); the action's own variables go over it. */
  readonly baseEnvironment: Readonly<Record<string, string>>;
}

/**
 * The execution log's SpawnExec of one executed spawn, as Bazel's ExpandedSpawnLogContext fills it:
 * the command, its environment sorted by name, its platform, every input with its digest (a
 * directory as the files inside it), the listed outputs sorted and the actual ones with digests, the
 * runner and cache hit, the exit code and, when it failed, a status. In-process actions are no
 * spawns (Bazel's file writes and symlinks are not logged either).
 */
export function spawnExecOf(record: ActionRecord, context: SpawnContext, digests: FileDigests): SpawnExecInit | undefined {
  const { action } = record;
  if (action.inProcess) return undefined;
  const env = { ...context.baseEnvironment, ...action.env };
  const platform = Object.entries(action.execProperties ?? {}).sort(([a], [b]) => compare(a, b));
  const requirements = new Set<string>(action.executionRequirements);
  const inputs: FileInit[] = [];
  for (const input of [...action.inputs].sort((a, b) => compare(a.execPath, b.execPath))) inputs.push(...digests.files(input.execPath, context.execRoot));
  const listed = action.outputs.map((o) => o.execPath).sort(compare);
  const actual = listed.flatMap((path) => digests.files(path, context.execRoot));
  return {
    commandArgs: [...action.argv],
    environmentVariables: Object.entries(env)
      .sort(([a], [b]) => compare(a, b))
      .map(([name, value]) => ({ name, value })),
    platform: { properties: platform.map(([name, value]) => ({ name, value })) },
    inputs,
    listedOutputs: listed,
    remotable: !requirements.has('local') && !requirements.has('no-remote') && !requirements.has('no-remote-exec'),
    cacheable: !requirements.has('no-cache') && !action.exitCodeIsResult,
    remoteCacheable: !requirements.has('no-cache') && !requirements.has('no-remote') && !requirements.has('no-remote-cache'),
    timeoutMillis: (action.timeoutSeconds ?? 0) * 1000,
    mnemonic: action.mnemonic,
    actualOutputs: actual,
    runner: record.runner,
    cacheHit: record.cacheHit,
    // Bazel's SpawnResult.Status names: a non-zero exit is NON_ZERO_EXIT, a timeout TIMEOUT.
    status: record.timedOut ? 'TIMEOUT' : record.failure ? (record.exitCode !== 0 ? 'NON_ZERO_EXIT' : 'EXECUTION_FAILED') : '',
    exitCode: record.exitCode,
    targetLabel: action.owner,
    metrics: {
      totalTime: { seconds: Math.floor((record.endMs - record.startMs) / 1000), nanos: ((record.endMs - record.startMs) % 1000) * 1e6 },
      startTime: { seconds: Math.floor(record.startMs / 1000), nanos: (record.startMs % 1000) * 1e6 },
    },
  };
}

/** SHA-256 digests of files under the execroot, each read once per build. */
export class FileDigests {
  private readonly known = new Map<string, { hash: string; sizeBytes: number } | null>();

  /** The file at `execPath` with its digest, or the files inside it when it is a directory; none when it is missing. */
  files(execPath: string, execRoot: string): FileInit[] {
    const full = join(execRoot, execPath);
    let stat;
    try {
      stat = lstatSync(full);
    } catch {
      return [];
    }
    if (stat.isDirectory()) {
      return readdirSync(full)
        .sort(compare)
        .flatMap((name) => this.files(`${execPath}/${name}`, execRoot));
    }
    let digest = this.known.get(full);
    if (digest === undefined) {
      try {
        const bytes = readFileSync(full);
        digest = { hash: createHash('sha256').update(bytes).digest('hex'), sizeBytes: bytes.length };
      } catch {
        digest = null;
      }
      this.known.set(full, digest);
    }
    return [{ path: execPath, ...(digest ? { digest: { ...digest, hashFunctionName: 'SHA-256' } } : {}) }];
  }
}

/**
 * `--execution_log_sort` (on by default): spawns ordered so that each comes after the spawns that
 * produced its inputs, the rest by their first listed output: two builds of the same actions give
 * the same order whatever the parallelism, as Bazel's StableSort does.
 */
export function sortSpawns(spawns: readonly SpawnExecInit[]): SpawnExecInit[] {
  const producer = new Map<string, SpawnExecInit>();
  for (const s of spawns) for (const o of s.listedOutputs ?? []) producer.set(o, s);
  const key = (s: SpawnExecInit) => s.listedOutputs?.[0] ?? '';
  const byKey = [...spawns].sort((a, b) => compare(key(a), key(b)));
  const out: SpawnExecInit[] = [];
  const placed = new Set<SpawnExecInit>();
  const place = (s: SpawnExecInit, path: Set<SpawnExecInit>) => {
    if (placed.has(s) || path.has(s)) return;
    path.add(s);
    for (const input of s.inputs ?? []) {
      const p = producer.get(input.path ?? '');
      if (p && p !== s) place(p, path);
    }
    placed.add(s);
    out.push(s);
  };
  for (const s of byKey) place(s, new Set());
  return out;
}

/** The execution log's formats: newline-delimited JSON, or varint-delimited binary SpawnExec messages. */
export function writeExecutionLog(path: string, format: 'json' | 'binary', spawns: readonly SpawnExecInit[]): void {
  const codec = spawnLog.SpawnExec;
  mkdirSync(dirname(path), { recursive: true });
  if (format === 'binary') {
    writeFileSync(path, Buffer.concat(spawns.map((s) => delimitedRecord(codec.encode(s)))));
    return;
  }
  const type = codec.type;
  const lines = spawns.map((s) =>
    JSON.stringify(type.toObject(type.fromObject(s as Record<string, unknown>), { enums: String, longs: String, bytes: String, json: true })),
  );
  writeFileSync(path, lines.map((l) => `${l}\n`).join(''));
}

/**
 * `--execution_log_compact_file`, as Bazel's CompactSpawnLogContext writes it: a zstd-compressed
 * stream of varint-delimited ExecLogEntry messages. The Invocation entry first; each file once, by
 * id, before the entries that refer to it; each spawn's inputs as an InputSet; then the Spawn with
 * its outputs by id (a declared output that is missing by path); Kiln's in-process symlinks as
 * SymlinkAction entries (other in-process work is no spawn, as in Bazel).
 */
export function writeCompactExecutionLog(
  path: string,
  records: readonly ActionRecord[],
  context: SpawnContext & { readonly invocationId: string; readonly workspaceRunfilesDirectory: string },
  digests: FileDigests,
): void {
  const entries: spawnLog.ExecLogEntryInit[] = [
    { invocation: { hashFunctionName: 'SHA-256', workspaceRunfilesDirectory: context.workspaceRunfilesDirectory, id: context.invocationId } },
  ];
  let nextId = 1;
  const fileIds = new Map<string, number>();
  const fileId = (file: FileInit): number => {
    const known = fileIds.get(file.path!);
    if (known !== undefined) return known;
    const id = nextId++;
    fileIds.set(file.path!, id);
    const digest = file.digest ? { hash: file.digest.hash!, sizeBytes: file.digest.sizeBytes! } : undefined;
    entries.push({ id, file: { path: file.path!, ...(digest ? { digest } : {}) } });
    return id;
  };
  for (const record of records) {
    const { action } = record;
    if (action.inProcess?.kind === 'symlink') {
      entries.push({
        symlinkAction: {
          inputPath: action.inputs[0]?.execPath ?? action.inProcess.target,
          outputPath: action.outputs[0]!.execPath,
          targetLabel: action.owner,
          mnemonic: action.mnemonic,
        },
      });
      continue;
    }
    const spawn = spawnExecOf(record, context, digests);
    if (!spawn) continue;
    const inputIds = (spawn.inputs ?? []).map(fileId);
    let inputSetId = 0;
    if (inputIds.length > 0) {
      inputSetId = nextId++;
      entries.push({ id: inputSetId, inputSet: { inputIds } });
    }
    const produced = new Map((spawn.actualOutputs ?? []).map((f) => [f.path!, f]));
    const outputs = (spawn.listedOutputs ?? []).flatMap((listed): spawnLog.ExecLogEntry_OutputInit[] => {
      const inside = [...produced.values()].filter((f) => f.path === listed || f.path!.startsWith(`${listed}/`));
      return inside.length > 0 ? inside.map((f) => ({ outputId: fileId(f) })) : [{ invalidOutputPath: listed }];
    });
    entries.push({
      spawn: {
        args: spawn.commandArgs ?? [],
        envVars: spawn.environmentVariables ?? [],
        platform: spawn.platform ?? {},
        ...(inputSetId ? { inputSetId } : {}),
        outputs,
        targetLabel: spawn.targetLabel ?? '',
        mnemonic: spawn.mnemonic ?? '',
        exitCode: spawn.exitCode ?? 0,
        status: spawn.status ?? '',
        runner: spawn.runner ?? '',
        cacheHit: spawn.cacheHit ?? false,
        remotable: spawn.remotable ?? false,
        cacheable: spawn.cacheable ?? false,
        remoteCacheable: spawn.remoteCacheable ?? false,
        timeoutMillis: spawn.timeoutMillis ?? 0,
        metrics: spawn.metrics ?? {},
      },
    });
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, zstdCompress(Buffer.concat(entries.map((e) => delimitedRecord(spawnLog.ExecLogEntry.encode(e))))));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
