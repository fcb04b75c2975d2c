export interface ReferenceRun {
  readonly name: string;
  readonly args: readonly string[];
  readonly repeat?: number;
}
export declare const REFERENCE_RUNS: readonly ReferenceRun[];
