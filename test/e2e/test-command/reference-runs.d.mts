export interface ReferenceRun {
  readonly name: string;
  readonly args: readonly string[];
  readonly repeat?: number;
  /** Compare the tests' output blocks (--test_output=all) too. */
  readonly outputs?: boolean;
}
export declare const REFERENCE_RUNS: readonly ReferenceRun[];
