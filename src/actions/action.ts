import type { Position } from '../core/index.js';

/**
 * The contract between analysis and execution: plain data, no behaviour, so analysis can build it,
 * tests can write it literally, and execution can key, cache and run it.
 */

/**
 * A file an action reads or writes, named by its exec path: relative to the execroot, `/`-separated,
 * never absolute, never containing `.` or `..` segments.
 */
export type Artifact = SourceArtifact | DerivedArtifact;

/** A file of the source tree (`pkg/data.txt`; `external/repo/...` for other repositories). */
export interface SourceArtifact {
  readonly kind: 'source';
  readonly execPath: string;
}

/** A file some action creates under an output root (`bazel-out/k8-fastbuild/bin/pkg/out.txt`). */
export interface DerivedArtifact {
  readonly kind: 'derived';
  readonly execPath: string;
  /** The output root the file lives under: `bazel-out/<config>/bin` or `bazel-out/<config>/genfiles`. */
  readonly root: string;
  /** Label of the target whose action creates it, e.g. `//pkg:gen`. */
  readonly owner: string;
  /**
   * What the action makes at the path: a regular file (absent), a directory whose contents are
   * known only after the action ran (`directory`, Bazel's tree artifact, `declare_directory`), or a
   * symlink whose target is kept as it is, never followed (`symlink`, `declare_symlink`).
   */
  readonly type?: 'directory' | 'symlink';
}

/**
 * Execution requirements, as Bazel derives them from a target's tags (and `local = True`): each
 * name present switches on one restriction. The values are Bazel's tag spellings.
 */
export const EXECUTION_REQUIREMENTS = [
  'local', // run locally, not sandboxed, not remote, no remote cache
  'no-sandbox', // may not be sandboxed
  'no-cache', // no cache of any kind: neither looked up nor written
  'no-remote', // neither executed remotely nor cached remotely/on disk
  'no-remote-exec', // not executed remotely (caching allowed)
  'no-remote-cache', // skip the disk and remote caches; the local action cache still applies
  'requires-network', // needs the network: sandboxed runs keep it
  'block-network', // must not reach the network
] as const;

export type ExecutionRequirement = (typeof EXECUTION_REQUIREMENTS)[number];

/** The execution requirements among a target's tags (other tags are for query and test filtering). */
export function executionRequirementsFromTags(tags: readonly string[]): ExecutionRequirement[] {
  const known = new Set<string>(EXECUTION_REQUIREMENTS);
  const found = new Set<ExecutionRequirement>();
  for (const tag of tags) if (known.has(tag)) found.add(tag as ExecutionRequirement);
  return [...found].sort();
}

/** One process to run: what execution keys, caches, schedules and spawns. */
export interface Action {
  /** Label of the target that registered it, e.g. `//pkg:gen`. */
  readonly owner: string;
  /** Where the owner is declared (for error messages `ERROR: pkg/BUILD:3:1: ...`). */
  readonly location?: Position;
  /** The kind of action, e.g. `Genrule`; selects the strategy with `--strategy=Genrule=...`. */
  readonly mnemonic: string;
  /** Shown while it runs, e.g. `Executing genrule //pkg:gen`. */
  readonly progressMessage: string;
  /** The command as given to exec(2): argv[0] is the program. Genrules: `/bin/bash -c '...'`. May be a getter that expands a Starlark rule's Args when first read. */
  readonly argv: readonly string[];
  /** Variables the action sets itself; PATH and the core variables are added by execution. */
  readonly env: Readonly<Record<string, string>>;
  /** Every file it reads, tools included. */
  readonly inputs: readonly Artifact[];
  /** Every file it must create; at least one. */
  readonly outputs: readonly DerivedArtifact[];
  readonly executionRequirements: readonly ExecutionRequirement[];
  /** Outputs get the executable bit (executable genrules, tools). */
  readonly executableOutputs: boolean;
  /**
   * A test run (Bazel's TestRunnerAction): a non-zero exit is the test's result, not a failure of the
   * build. Its outputs (log, XML) are kept and checked as after success, but such a result is never
   * cached, so a failed test runs again next time.
   */
  readonly exitCodeIsResult?: boolean;
  /**
   * Seconds after which the process is killed (Bazel's `timeout` execution info, a test's timeout):
   * the REAPI Action's `timeout`, so part of the key. A test action enforces it itself as well
   * (its setup script), so a local run reports the timeout in its own result files.
   */
  readonly timeoutSeconds?: number;
  /**
   * Work execution does itself instead of starting a process (`argv` is then empty): writing a
   * file, expanding a template, linking a file. Keyed and cached like any other action.
   */
  readonly inProcess?: InProcessWork;
  /**
   * The target's `exec_properties` (e.g. `container-image`, `Pool`): platform properties of the
   * REAPI Action, so part of its key; they choose where a remote executor runs it.
   */
  readonly execProperties?: Readonly<Record<string, string>>;
  /**
   * The command line once the directories among the inputs are known: present when Args expand a
   * tree artifact into the files inside it (`expand_directories`), which exist only after its
   * action ran. Execution calls it with the files of each tree input and runs that argv. A getter
   * that reads argv first: a function keeps the action out of the analysis cache (v8 serialization).
   */
  readonly argvWithTrees?: ((filesOf: TreeFileLister) => readonly string[]) | undefined;
}

/** The exec paths of the files inside a tree artifact, by the tree's exec path (sorted). */
export type TreeFileLister = (treeExecPath: string) => readonly string[];

/**
 * The exec platform's `exec_properties` followed by the target's (a later entry of a name wins, as
 * Bazel lets a target override its platform) as an Action field; absent when empty.
 */
export function execPropertiesOf(entries: readonly (readonly [string, string])[]): { execProperties?: Readonly<Record<string, string>> } {
  return entries.length > 0 ? { execProperties: Object.fromEntries(entries) } : {};
}

/** What an in-process action does: its one output gets this content (`copies`: all its outputs). */
export type InProcessWork =
  | { readonly kind: 'write'; readonly content: string }
  /**
   * Bytes that are not text (a binary protobuf), base64-encoded so the action stays plain data;
   * `gunzip`: the bytes are gzip data whose decompression is written (a large genquery result is
   * held compressed until its action runs, as Bazel holds it).
   */
  | { readonly kind: 'write_binary'; readonly base64: string; readonly gunzip?: true }
  /** The template (an input, by exec path) with each key replaced by its value, in order. */
  | { readonly kind: 'expand_template'; readonly template: string; readonly substitutions: readonly (readonly [string, string])[] }
  /** A copy of the target file (an input, by exec path): the same bytes as a symlink would show. */
  | { readonly kind: 'symlink'; readonly target: string }
  /** A copy of the target directory (a tree input, by exec path) into a directory output. */
  | { readonly kind: 'copy_directory'; readonly target: string }
  /**
   * Every output of the action at once (a runfiles tree): each `[from, to]` pair a copy of an input
   * file (executable bit kept) or tree artifact (its symlinks kept as they are), by exec path, then
   * each `[path, text]` pair written.
   */
  | { readonly kind: 'copies'; readonly copies: readonly (readonly [string, string])[]; readonly writes: readonly (readonly [string, string])[] }
  /** A symlink with exactly this target path, resolved or not (a `declare_symlink` output). */
  | { readonly kind: 'unresolved_symlink'; readonly targetPath: string }
  /**
   * Fails with this message when it runs: an error analysis found but Bazel reports during execution
   * (genquery's strict query leaving its scope), so the rest of the build goes on as far as it can.
   */
  | { readonly kind: 'fail'; readonly message: string };

/**
 * Set in a process's environment when the caller wants its output live (`kiln test
 * --test_output=streamed`): the path of a named pipe whose reader shows what is written as it comes.
 * Per run, like TMPDIR: never part of the action's key.
 */
export const LIVE_OUTPUT_ENV = 'KILN_LIVE_OUTPUT';
