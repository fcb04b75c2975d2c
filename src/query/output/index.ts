import { buildOutput } from './build-output.js';
import type { OutputFormatter } from './formatter.js';
import { labelKindOutput } from './label-kind-output.js';
import { labelOutput } from './label-output.js';
import { locationOutput } from './location-output.js';
import { packageOutput } from './package-output.js';

export type { OutputFormatter, OutputEnvironment } from './formatter.js';

/** The --output values `kiln query` understands. */
export const OUTPUT_FORMATTERS: ReadonlyMap<string, OutputFormatter> = new Map([
  ['label', labelOutput],
  ['label_kind', labelKindOutput],
  ['package', packageOutput],
  ['location', locationOutput],
  ['build', buildOutput],
]);
