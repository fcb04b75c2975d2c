import type { Action, DerivedArtifact, InProcessWork } from '../../actions/index.js';
import type { FileEntry } from '../configured/configured-target.js';
import type { RuleContext } from '../configured/rule-context.js';

/**
 * An in-process action of a built-in rule that gives its one output `work`'s content (or fails with
 * its message): no process and no input, so it runs wherever Kiln runs, as Bazel's own
 * file-writing actions do.
 */
export function fileWriteAction(ctx: RuleContext, output: FileEntry, work: InProcessWork, labels: { mnemonic: string; progressMessage: string }): Action {
  return {
    owner: ctx.target.label,
    ...(ctx.target.location ? { location: ctx.target.location } : {}),
    mnemonic: labels.mnemonic,
    progressMessage: labels.progressMessage,
    argv: [],
    env: {},
    inputs: [],
    outputs: [output.artifact as DerivedArtifact],
    executionRequirements: [],
    executableOutputs: false,
    inProcess: work,
  };
}
