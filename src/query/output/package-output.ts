import { packageId } from '../../loading/index.js';
import type { OutputFormatter } from './formatter.js';

/** `--output=package`: the distinct packages of the result, sorted (main repository without `//`). */
export const packageOutput: OutputFormatter = {
  ordering: 'packages',
  format: (targets) => {
    const names = new Set(targets.map((t) => (t.pkg.repo === '' ? t.pkg.pkg : packageId(t.pkg.repo, t.pkg.pkg))));
    return [...names]
      .sort()
      .map((n) => `${n}\n`)
      .join('');
  },
};
