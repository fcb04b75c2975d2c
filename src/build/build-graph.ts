import type { Action } from '../actions/index.js';
import type { OutputDirectories, RunEnvironment, TestTarget } from '../analysis/index.js';
import type { RecordedConfiguration } from './records/build-event-recorder.js';

/** A requested target as execution and the closing lines need it: its label and default outputs. */
export interface BuiltTarget {
  readonly label: string;
  /** What the Build Event Protocol calls its kind: `genrule rule`, `source file`, `generated file`. */
  readonly targetKind?: string;
  /** Exec paths of its default outputs (DefaultInfo files), in order. */
  readonly files: readonly string[];
  /** Exec path of the program `kiln run` starts, when the rule says which (Starlark rules' DefaultInfo). */
  readonly executable?: string;
  /** An executable rule's `args` and `env`, expanded: `kiln run` passes them to the program. */
  readonly runEnvironment?: RunEnvironment;
  /** `kiln run`: exec path of the program's runfiles tree (`<program>.runfiles`). */
  readonly runfilesDir?: string;
}

/** An aspect applied from the command line (`--aspects`) to a requested target, with the files of its requested output groups. */
export interface BuiltAspect {
  /** `//pkg:x.bzl%name` */
  readonly aspect: string;
  readonly target: string;
  readonly files: readonly string[];
}

/** What loading and analysis hand to execution: plain data, so a later command can reuse it whole. */
export interface BuildGraph {
  /** The requested targets that were analyzed, in request order. */
  readonly targets: readonly BuiltTarget[];
  /** `--aspects`: every aspect on every requested target, in order. */
  readonly aspects?: readonly BuiltAspect[];
  /** Every action analysis registered; execution runs those `requested` needs. */
  readonly actions: readonly Action[];
  /** Exec paths the build produces: the targets' files (and runfiles for `run`), the tests' results. */
  readonly requested: readonly string[];
  /** The target configuration's output directories (convenience symlinks, display paths). */
  readonly outputDirectories: OutputDirectories;
  /** `kiln test`: the tests to run, with their actions (also in `actions`). */
  readonly tests?: readonly TestTarget[];
  /** The target configuration, as the build's records name it. */
  readonly configuration?: RecordedConfiguration;
}
