import type { OutputFormatter } from './formatter.js';

/** `--output=label`: one label per line. */
export const labelOutput: OutputFormatter = {
  ordering: 'targets',
  format: (targets) => targets.map((t) => `${t.label}\n`).join(''),
};
