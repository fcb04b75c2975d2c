import { targetKind } from '../../loading/index.js';
import type { OutputFormatter } from './formatter.js';

/** `--output=label_kind`: `genrule rule //pkg:name`. */
export const labelKindOutput: OutputFormatter = {
  ordering: 'targets',
  format: (targets) => targets.map((t) => `${targetKind(t.target)} ${t.label}\n`).join(''),
};
