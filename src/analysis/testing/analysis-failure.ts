import type { KilnError } from '../../core/index.js';
import { ANALYSIS_FAILURE_INFO, Depset, depsetOf, Label, StarLabel, type ProviderInstance } from '../../loading/index.js';
import { StarObject, type Value } from '../../starlark/index.js';
import type { BuildConfiguration } from '../config/build-configuration.js';

/** Bazel's `AnalysisFailure`: the label of a target whose analysis failed, and the error. */
export class AnalysisFailure extends StarObject {
  constructor(
    readonly label: string,
    readonly message: string,
  ) {
    super();
  }
  get type(): string {
    return 'AnalysisFailure';
  }
  override attr(name: string): Value | undefined {
    if (name === 'label') return new StarLabel(Label.parse(this.label));
    if (name === 'message') return this.message;
    return undefined;
  }
  override attrNames(): string[] {
    return ['label', 'message'];
  }
  override hash(): number {
    let h = 0;
    const s = `${this.label}\n${this.message}`;
    for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
    return h;
  }
  repr(): string {
    return `<AnalysisFailure ${this.label}>`;
  }
}

/**
 * Thrown while analysing a target whose dependency carries AnalysisFailureInfo (its analysis failed
 * under --allow_analysis_failures): the dependent fails too, its AnalysisFailureInfo holding the
 * dependency's causes, as Bazel propagates them.
 */
export class DependencyAnalysisFailed extends Error {
  constructor(readonly causes: Depset) {
    super('a dependency failed analysis');
  }
}

/** Whether a configuration lets a failed analysis become AnalysisFailureInfo (`--allow_analysis_failures`). */
export function allowsAnalysisFailures(config: BuildConfiguration): boolean {
  return config.options.getBool('allow_analysis_failures');
}

/** The AnalysisFailureInfo of a target whose analysis threw `error` (its own failure, or its dependencies'). */
export function analysisFailureInfo(label: string, error: KilnError | DependencyAnalysisFailed): ProviderInstance {
  const causes = error instanceof DependencyAnalysisFailed ? error.causes : depsetOf([new AnalysisFailure(label, error.message)]);
  return ANALYSIS_FAILURE_INFO.instantiate([], [['causes', causes]]);
}

/** The causes a dependency's AnalysisFailureInfo holds, or undefined when it has none. */
export function failureCausesOf(providers: ReadonlyMap<string, ProviderInstance> | undefined): Depset | undefined {
  const causes = providers?.get(ANALYSIS_FAILURE_INFO.key)?.field('causes');
  return causes instanceof Depset ? causes : undefined;
}
