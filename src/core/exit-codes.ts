/** Bazel's exit codes, which Kiln keeps so scripts written for Bazel keep working. */
export const ExitCode = {
  SUCCESS: 0,
  BUILD_FAILURE: 1,
  COMMAND_LINE_ERROR: 2,
  TESTS_FAILED: 3,
  NO_TESTS_FOUND: 4,
  INTERRUPTED: 8,
  /** A remote server (cache or executor) failed the build, e.g. unreachable. */
  REMOTE_ERROR: 34,
  INTERNAL_ERROR: 37,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
