/** Bazel's exit codes, which Kiln keeps so scripts written for Bazel keep working. */
export const ExitCode = {
  SUCCESS: 0,
  BUILD_FAILURE: 1,
  COMMAND_LINE_ERROR: 2,
  TESTS_FAILED: 3,
  /** `query --keep_going` printed a result although some targets or packages had errors. */
  PARTIAL_ANALYSIS_FAILURE: 3,
  NO_TESTS_FOUND: 4,
  /** A query that could not be evaluated (also a genquery whose expression fails). */
  ANALYSIS_FAILURE: 7,
  INTERRUPTED: 8,
  INTERNAL_ERROR: 37,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
