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
  /** A remote server (cache or executor) failed the build, e.g. unreachable. */
  REMOTE_ERROR: 34,
  INTERNAL_ERROR: 37,
  /** The Build Event Service upload failed in a way a retry could get past (Bazel's TRANSIENT_BUILD_EVENT_SERVICE_UPLOAD_ERROR). */
  BES_TRANSIENT_UPLOAD_ERROR: 38,
  /** The Build Event Service refused the upload (Bazel's PERSISTENT_BUILD_EVENT_SERVICE_UPLOAD_ERROR). */
  BES_PERSISTENT_UPLOAD_ERROR: 45,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
