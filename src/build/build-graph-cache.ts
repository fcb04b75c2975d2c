import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import type { TestSettings } from '../analysis/index.js';
import type { PackageRecord } from '../loading/index.js';
import type { BuildGraph } from './build-graph.js';
import { codeStamp } from '../core/index.js';

/** What the graph's analysis depended on besides its inputs: equal keys, equal graph. */
export interface BuildGraphKey {
  /** The workspace's own files' contents (registrations and repositories are read from them outside the graph). */
  readonly workspaceFiles?: string;
  readonly command: string;
  readonly patterns: readonly string[];
  /** The working directory inside the workspace (relative patterns). */
  readonly offset: string;
  /** BuildOptions.fingerprint(): execution-only options left out. */
  readonly options: string;
  readonly workspaceName: string;
  readonly ignoredDirectories: readonly string[];
  readonly host: { readonly platform: string; readonly arch: string };
  /** `kiln test`: the test settings, with the client's values of inherited `--test_env` names. */
  readonly testSettings?: TestSettings;
  /** The `STABLE_*` keys `--workspace_status_command` printed. */
  readonly stableStatus?: readonly (readonly [string, string])[];
}

interface Entry {
  readonly version: string;
  readonly key: string;
  readonly inputs: readonly (readonly [string, string])[];
  readonly graph: BuildGraph;
  /** Warnings analysis printed: shown again when the graph is reused. */
  readonly warnings: readonly string[];
  /** The packages loading loaded, with their values' fingerprints (an edit that changes none keeps the graph). */
  readonly packages: readonly PackageRecord[];
}

/** A stored graph as `lookup` gives it. */
export interface CachedBuildGraph {
  readonly graph: BuildGraph;
  readonly warnings: readonly string[];
  readonly inputs: readonly (readonly [string, string])[];
  readonly packages: readonly PackageRecord[];
}

/**
 * Entries kept: one per distinct command line in use (build and test, say), the least recently
 * written go first. Few: each is the whole graph (about 11 MB at 1,000 packages), and a command line
 * not among them still reuses every configured target it can (IncrementalAnalysis).
 */
const MAX_ENTRIES = 3;

/** Entries are valid only for the Kiln build that wrote them (see codeStamp). */
export const BUILD_GRAPH_VERSION = `kiln-build-graph-1:${codeStamp(import.meta.url)}`;

/**
 * The analysis cache that makes a null build or a rebuild after a source edit skip loading and
 * analysis: the build graph of a command line, stored in the output base with every input its
 * loading and analysis read (BUILD and .bzl files by content, directory listings), and reused
 * while each of them is unchanged, or while the only ones that changed are BUILD files whose
 * packages came out equal (a comment that moves no target). It stands in for the warm analysis cache of Bazel's server.
 */
export class BuildGraphCache {
  constructor(private readonly dir: string) {}

  static key(parts: BuildGraphKey): string {
    return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
  }

  /** The stored graph for `key` if `stillValid` accepts its inputs and packages, with its warnings, inputs and packages. */
  lookup(
    key: string,
    stillValid: (inputs: readonly (readonly [string, string])[], packages: readonly PackageRecord[]) => boolean,
  ): CachedBuildGraph | undefined {
    let entry: Entry;
    try {
      entry = deserialize(readFileSync(this.pathOf(key))) as Entry;
    } catch {
      return undefined; // absent or unreadable: analyze
    }
    if (entry.version !== BUILD_GRAPH_VERSION || entry.key !== key || !stillValid(entry.inputs, entry.packages)) return undefined;
    return { graph: entry.graph, warnings: entry.warnings, inputs: entry.inputs, packages: entry.packages };
  }

  /** Stores a graph whose loading and analysis had no error. Written atomically; failures only cost reuse. */
  store(key: string, inputs: Iterable<readonly [string, string]>, graph: BuildGraph, warnings: readonly string[], packages: readonly PackageRecord[]): void {
    const entry: Entry = { version: BUILD_GRAPH_VERSION, key, inputs: [...inputs], graph, warnings, packages };
    const path = this.pathOf(key);
    const tmp = `${path}.${process.pid}.tmp`;
    try {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(tmp, serialize(entry));
      renameSync(tmp, path);
      this.prune();
    } catch {
      // A read-only or full output base: the next command analyzes again.
    }
  }

  private pathOf(key: string): string {
    return join(this.dir, `${key}.v8`);
  }

  private prune(): void {
    const entries = readdirSync(this.dir)
      .filter((name) => name.endsWith('.v8'))
      .map((name) => ({ path: join(this.dir, name), mtime: statSync(join(this.dir, name), { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
      .sort((a, b) => b.mtime - a.mtime);
    for (const stale of entries.slice(MAX_ENTRIES)) unlinkSync(stale.path);
  }
}
