import { createHash } from 'node:crypto';
import type { Action } from './action.js';
import type { InputEntry } from './input-tree.js';

/** Changes whenever the encoding below changes, so old entries simply miss. */
const ENCODING_VERSION = 1;

const byPath = (a: InputEntry, b: InputEntry) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/**
 * The local action cache's key: the SHA-256 of everything the REAPI Action digest covers (arguments,
 * environment, outputs, every input with its digest and executable bit, do_not_cache, platform, timeout), written as one
 * unambiguous JSON text. The REAPI key needs a Command, a Directory per input folder and an Action
 * encoded and hashed; a null build checks every action, so it uses this one and encodes the REAPI
 * messages only when an action must go further (the disk cache, execution).
 */
export function localActionKey(
  action: Action,
  env: Readonly<Record<string, string>>,
  inputs: readonly InputEntry[],
  platform: Readonly<Record<string, string>> = {},
): string {
  const fields: unknown[] = [
    ENCODING_VERSION,
    action.argv,
    Object.keys(env)
      .sort()
      .map((name) => [name, env[name]]),
    action.outputs.map((o) => (o.type ? `${o.execPath}\0${o.type}` : o.execPath)).sort(),
    [...inputs]
      .sort(byPath)
      .map((f) =>
        f.kind === undefined ? [f.path, f.digest.hash, f.digest.sizeBytes, f.isExecutable] : [f.path, f.kind, f.kind === 'symlink' ? f.target : ''],
      ),
    action.executionRequirements.includes('no-cache'),
    // In-process work (a file's content, a template's substitutions) decides the output as argv does.
    ...(action.inProcess ? [action.inProcess] : []),
  ];
  // Platform properties (remote builds) come last and only when present, so local keys stay as they were.
  const properties = Object.keys(platform).sort();
  if (properties.length > 0) fields.push(properties.map((name) => [name, platform[name]]));
  // The REAPI Action's timeout, tagged so it can never be read as platform properties.
  if (action.timeoutSeconds) fields.push(['timeout', action.timeoutSeconds]);
  const text = JSON.stringify(fields);
  return createHash('sha256').update(text).digest('hex');
}
