import { createHash } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ByteReader, ByteWriter, fileStampOf, readChecksummedFile, readFileStamp, sameFileStamp, writeChecksummedFile, writeFileStamp } from '../core/index.js';
import type { CheckedFile } from '../exec/index.js';
import type { PackageRecord } from '../loading/index.js';
import type { BuiltTarget } from './build-graph.js';
import { BUILD_GRAPH_VERSION } from './build-graph-cache.js';

/** What a repeated null build prints and does besides checking files, as the first one did. */
export interface NullBuildOutcome {
  /** Warnings of analysis, printed again as a reused build graph prints them. */
  readonly warnings: readonly string[];
  readonly analyzedTargets: number;
  readonly totalActions: number;
  /** The requested targets and their default outputs, for the closing lines. */
  readonly targets: readonly Pick<BuiltTarget, 'label' | 'files'>[];
  /** The target configuration's output directories, for the convenience symlinks. */
  readonly bin: string;
  readonly genfiles: string;
  readonly testlogs: string;
}

export interface NullBuildRecord extends NullBuildOutcome {
  /** The command line's key (see nullBuildKey). */
  readonly key: string;
  /** What loading and analysis read, as the build graph cache keeps it: `[input id, fingerprint]`. */
  readonly analysisInputs: readonly (readonly [string, string])[];
  /** The packages loaded, with their values' fingerprints: a BUILD edit that changes none keeps the record. */
  readonly analysisPackages: readonly PackageRecord[];
  readonly files: readonly CheckedFile[];
}

/** The layout's name and number. */
const MAGIC = 'KILNNULL\u0004';

/**
 * The key of a command line for the record: its build graph's key, every option including the
 * execution-only ones, and the client's PATH (part of every action's environment). Valid only for the
 * Kiln build that wrote it, as the build graph.
 */
export function nullBuildKey(graphKey: string, allOptions: string, clientPath: string | undefined): string {
  return createHash('sha256')
    .update(JSON.stringify([BUILD_GRAPH_VERSION, graphKey, allOptions, clientPath ?? null]))
    .digest('hex');
}

/**
 * The shortcut of a repeated null build. After a `kiln build` in which every action was already up to
 * date, the record keeps what made it so: the command line's key, the inputs loading and analysis
 * read, and every source and output file the actions' checks stat'ed, with the stamps they had. The
 * same command line then stats those files and, while every one still has its stamp, reports the same
 * null build without reading the build graph, the action cache or the digest cache; any difference
 * takes the ordinary path, which writes a new record once it is a null build again. (Bazel's warm
 * server answers from memory after checking the files; Kiln has no server, and this stands in.)
 *
 * One record per output base, the last command line's; checksummed and replaced atomically.
 */
export class NullBuildRecords {
  private readonly file: string;

  constructor(outputBase: string) {
    this.file = join(outputBase, 'analysis', 'null-build.bin');
  }

  /** The record of `key`, if the last null build had that command line. */
  read(key: string): NullBuildRecord | undefined {
    const bytes = readChecksummedFile(this.file, MAGIC);
    if (!bytes) return undefined;
    try {
      const r = new ByteReader(bytes);
      if (r.string() !== key) return undefined;
      const strings = () => Array.from({ length: r.uint() }, () => r.string());
      const warnings = strings();
      const analyzedTargets = r.uint();
      const totalActions = r.uint();
      const targets = Array.from({ length: r.uint() }, () => ({ label: r.string(), files: strings() }));
      const [bin, genfiles, testlogs] = strings();
      const analysisInputs = Array.from({ length: r.uint() }, () => [r.string(), r.string()] as const);
      const analysisPackages = Array.from({ length: r.uint() }, () => ({ repo: r.string(), pkg: r.string(), buildFile: r.string(), fingerprint: r.string() }));
      const files = Array.from({ length: r.uint() }, () => ({ path: r.string(), stamp: readFileStamp(r) }));
      return {
        key,
        warnings,
        analyzedTargets,
        totalActions,
        targets,
        bin: bin!,
        genfiles: genfiles!,
        testlogs: testlogs!,
        analysisInputs,
        analysisPackages,
        files,
      };
    } catch {
      return undefined; // right checksum, wrong layout: the ordinary path
    }
  }

  /** Keeps `record`; a failure to write only costs the shortcut. */
  write(record: NullBuildRecord): void {
    const w = new ByteWriter(1 << 16);
    w.string(record.key);
    const strings = (list: readonly string[]) => {
      w.uint(list.length);
      for (const s of list) w.string(s);
    };
    strings(record.warnings);
    w.uint(record.analyzedTargets);
    w.uint(record.totalActions);
    w.uint(record.targets.length);
    for (const t of record.targets) {
      w.string(t.label);
      strings(t.files);
    }
    strings([record.bin, record.genfiles, record.testlogs]);
    w.uint(record.analysisInputs.length);
    for (const [id, fingerprint] of record.analysisInputs) {
      w.string(id);
      w.string(fingerprint);
    }
    w.uint(record.analysisPackages.length);
    for (const p of record.analysisPackages) for (const text of [p.repo, p.pkg, p.buildFile, p.fingerprint]) w.string(text);
    w.uint(record.files.length);
    for (const { path, stamp } of record.files) {
      w.string(path);
      writeFileStamp(w, stamp);
    }
    try {
      writeChecksummedFile(this.file, MAGIC, [w.finish()]);
    } catch {
      // A read-only or full output base: the next null build takes the ordinary path.
    }
  }

  /** Drops the record (it no longer holds), so the next command does not check it again. */
  discard(): void {
    rmSync(this.file, { force: true });
  }
}

/** Whether every file of the record still has its stamp under `execRoot` (one stat each). */
export function filesUnchanged(record: NullBuildRecord, execRoot: string): boolean {
  for (const { path, stamp } of record.files) {
    let st;
    try {
      st = statSync(join(execRoot, path), { throwIfNoEntry: false });
    } catch {
      return false; // ELOOP, EACCES...: the ordinary path says what is wrong
    }
    if (st === undefined || !st.isFile() || !sameFileStamp(fileStampOf(st), stamp)) return false;
  }
  return true;
}
