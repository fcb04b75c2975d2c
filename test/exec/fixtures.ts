import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Action, Artifact, DerivedArtifact, ExecutionRequirement } from '../../src/actions/index.js';
import type { ActionFailure, ExecutionReporter, ExecutionSummary, ProcessKind } from '../../src/exec/index.js';

export const BIN = 'bazel-out/k8-fastbuild/bin';

export function source(execPath: string): Artifact {
  return { kind: 'source', execPath };
}

export function derived(pkgPath: string, owner: string): DerivedArtifact {
  return { kind: 'derived', execPath: `${BIN}/${pkgPath}`, root: BIN, owner };
}

export interface GenruleSpec {
  readonly srcs?: readonly Artifact[];
  readonly outs: readonly string[];
  readonly cmd: string;
  readonly requirements?: readonly ExecutionRequirement[];
  readonly executable?: boolean;
  readonly env?: Record<string, string>;
  readonly mnemonic?: string;
}

/** A genrule-shaped action as analysis will register it: bash -c with set -euo pipefail. */
export function genrule(label: string, spec: GenruleSpec): Action {
  const pkg = label.slice(2, label.indexOf(':'));
  return {
    owner: label,
    location: { file: `${pkg}/BUILD`, line: 1, col: 1 },
    mnemonic: spec.mnemonic ?? 'Genrule',
    progressMessage: `Executing genrule ${label}`,
    argv: ['/bin/bash', '-c', `set -euo pipefail; ${spec.cmd}`],
    env: spec.env ?? {},
    inputs: spec.srcs ?? [],
    outputs: spec.outs.map((o) => derived(`${pkg}/${o}`, label)),
    executionRequirements: spec.requirements ?? [],
    executableOutputs: spec.executable ?? false,
  };
}

/** Output path of a genrule out, as its commands see it. */
export function out(pkg: string, name: string): string {
  return `${BIN}/${pkg}/${name}`;
}

export interface Workspace {
  readonly root: string;
  readonly execRoot: string;
  readonly outputBase: string;
  write(path: string, content: string): Promise<void>;
  read(path: string): Promise<string>;
  cleanup(): Promise<void>;
}

/** A temp dir with an execroot (sources written straight into it) and an output base beside it. */
export async function makeWorkspace(): Promise<Workspace> {
  const root = await mkdtemp(join(tmpdir(), 'kiln-exec-'));
  const execRoot = join(root, 'execroot');
  const outputBase = join(root, 'output_base');
  await mkdir(execRoot, { recursive: true });
  return {
    root,
    execRoot,
    outputBase,
    async write(path, content) {
      await mkdir(dirname(join(execRoot, path)), { recursive: true });
      await writeFile(join(execRoot, path), content);
    },
    read: (path) => readFile(join(execRoot, path), 'utf8'),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** Remembers every event, for assertions. */
export class RecordingReporter implements ExecutionReporter {
  readonly started: string[] = [];
  readonly finished: { owner: string; kind: ProcessKind | undefined }[] = [];
  readonly failures: ActionFailure[] = [];
  readonly warnings: string[] = [];
  summary: ExecutionSummary | undefined;
  total = -1;

  buildStarted(totalActions: number): void {
    this.total = totalActions;
  }
  /** Called after an action is recorded as started (e.g. to abort the build at that moment). */
  onStarted: ((action: Action) => void) | undefined;

  actionStarted(action: Action): void {
    this.started.push(action.owner);
    this.onStarted?.(action);
  }
  actionFinished(action: Action, kind: ProcessKind | undefined): void {
    this.finished.push({ owner: action.owner, kind });
  }
  actionFailed(failure: ActionFailure): void {
    this.failures.push(failure);
  }
  warning(message: string): void {
    this.warnings.push(message);
  }
  buildFinished(summary: ExecutionSummary): void {
    this.summary = summary;
  }
}

/** Processes that ran (not cache hits). */
export function ran(summary: ExecutionSummary | undefined): number {
  if (!summary) return -1;
  return summary.processes.local + summary.processes['linux-sandbox'];
}
