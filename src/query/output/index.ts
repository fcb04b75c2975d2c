import { buildOutput } from './build-output.js';
import type { OutputFormatter } from './formatter.js';
import { graphOutput } from './graph-output.js';
import { labelKindOutput } from './label-kind-output.js';
import { labelOutput } from './label-output.js';
import { locationOutput } from './location-output.js';
import { packageOutput } from './package-output.js';
import { protoOutput, streamedJsonProtoOutput, streamedProtoOutput } from './proto-outputs.js';
import { maxrankOutput, minrankOutput } from './rank-outputs.js';
import { xmlOutput } from './xml-output.js';

export type { OutputFormatter, OutputEnvironment, OrderOutput } from './formatter.js';
export { targetMessage } from './proto-outputs.js';

/** The --output values `kiln query` and genquery understand. */
export const OUTPUT_FORMATTERS: ReadonlyMap<string, OutputFormatter> = new Map([
  ['label', labelOutput],
  ['label_kind', labelKindOutput],
  ['package', packageOutput],
  ['location', locationOutput],
  ['build', buildOutput],
  ['graph', graphOutput],
  ['minrank', minrankOutput],
  ['maxrank', maxrankOutput],
  ['xml', xmlOutput],
  ['proto', protoOutput],
  ['streamed_proto', streamedProtoOutput],
  ['streamed_jsonproto', streamedJsonProtoOutput],
]);
