import type { QueryTarget } from '../target-loader.js';

/** Turns a query result into output text; one formatter per --output value. */
export interface OutputFormatter {
  format(targets: readonly QueryTarget[], env: OutputEnvironment): string;
}

export interface OutputEnvironment {
  /** Absolute path of a display path (workspace-relative, or external/<repo>/...). */
  absolutePath(displayPath: string): string;
}
