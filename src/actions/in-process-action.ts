import type { Position } from '../core/index.js';
import type { Action, Artifact, DerivedArtifact, InProcessWork } from './action.js';

export interface InProcessActionParts {
  readonly owner: string;
  readonly location?: Position | undefined;
  readonly mnemonic: string;
  readonly progressMessage: string;
  /** The one output `work` gives its content to. */
  readonly output: DerivedArtifact;
  readonly work: InProcessWork;
  /** Files `work` reads (a template, a link's target); none for a plain write. */
  readonly inputs?: readonly Artifact[];
  readonly executable?: boolean;
}

/** An action Kiln does itself, without a process (a file write, a template, a copy, a failure). */
export function inProcessAction(parts: InProcessActionParts): Action {
  return {
    owner: parts.owner,
    ...(parts.location ? { location: parts.location } : {}),
    mnemonic: parts.mnemonic,
    progressMessage: parts.progressMessage,
    argv: [],
    env: {},
    inputs: parts.inputs ?? [],
    outputs: [parts.output],
    executionRequirements: [],
    executableOutputs: parts.executable ?? false,
    inProcess: parts.work,
  };
}
