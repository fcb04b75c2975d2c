import { createHash } from 'node:crypto';
import type { BuildSettingLookup } from '../config/config-matching.js';
import { sameOptionValue } from '../../core/options/index.js';
import type { BuildOptions } from '../options/build-options.js';
import type { OptionValue } from '../../core/options/index.js';
import { userFlagValue, type BuildSettingValue } from '../options/user-defined-flag.js';
import { sameBuildSettingValue } from './build-setting-values.js';
import { COMMAND_LINE_OPTION_PREFIX } from './native-option-values.js';

/** Options the output directory's name states itself (`<cpu>-<compilation_mode>`), so the hash leaves them out. */
const EXPLICIT_IN_OUTPUT_PATH = new Set(['cpu', 'compilation_mode', 'platform_suffix']);

/** Bazel's OutputPathMnemonicComputer.HASH_LENGTH. */
const HASH_LENGTH = 12;

/**
 * Present-day Bazel's transition directory name fragment (OutputPathMnemonicComputer.
 * computeNameFragmentWithDiff, the `diff_against_dynamic_baseline` scheme): `ST-` and the first 12
 * hex digits of a SHA-256 Fingerprint over `<option>=<value>` of every option that differs from
 * the baseline (the top-level configuration's options), sorted, native ones named
 * `//command_line_option:<name>`, a build setting back at its default `<label>@null`. Empty when
 * nothing outside the explicit parts of the name differs.
 */
export function transitionDirectoryNameFragment(to: BuildOptions, baseline: BuildOptions, buildSettings?: BuildSettingLookup): string {
  if (to.fingerprint() === baseline.fingerprint()) return '';
  const toHash = new Map<string, string | null>();
  const stampIsDefault = !to.getBool('stamp');
  for (const name of to.registry.names()) {
    const def = to.registry.get(name)!;
    if (def.executionOnly || EXPLICIT_IN_OUTPUT_PATH.has(def.name) || (def.name === 'stamp' && stampIsDefault)) continue;
    const value = to.get(def.name);
    if (!sameOptionValue(value, baseline.get(def.name))) toHash.set(`${COMMAND_LINE_OPTION_PREFIX}${def.name}`, javaString(value));
  }
  for (const label of new Set([...to.userFlags.keys(), ...baseline.userFlags.keys()])) {
    const def = buildSettings?.(label);
    if (!def) continue;
    const value = userFlagValue(def, to.userFlags.get(label));
    if (sameBuildSettingValue(value, userFlagValue(def, baseline.userFlags.get(label)))) continue;
    // A setting at its default is not in Bazel's map of Starlark options: `@null`.
    toHash.set(bazelLabel(label), to.userFlags.has(label) ? starlarkOptionString(value) : null);
  }
  if (toHash.size === 0) return '';
  const strings = [...toHash.keys()].sort().map((k) => (toHash.get(k) === null ? `${k}@null` : `${k}=${toHash.get(k)}`));
  return nameFragmentOf(strings);
}

/** `ST-<hash>` over the strings as Bazel's Fingerprint.addString adds them: a varint length, then UTF-8. */
export function nameFragmentOf(strings: readonly string[]): string {
  const hash = createHash('sha256');
  for (const s of strings) {
    const bytes = Buffer.from(s, 'utf8');
    hash.update(varint(bytes.length));
    hash.update(bytes);
  }
  return `ST-${hash.digest('hex').slice(0, HASH_LENGTH)}`;
}

function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return Buffer.from(out);
}

/** A native option's value as Java's toString prints it (a List as `[a, b]`). */
function javaString(value: OptionValue): string {
  if (Array.isArray(value)) return `[${(value as readonly string[]).join(', ')}]`;
  return String(value);
}

/** A Starlark option's value as Bazel prints it: strings as they are, lists as Starlark lists. */
function starlarkOptionString(value: BuildSettingValue): string {
  if (Array.isArray(value)) return `[${(value as readonly string[]).map((v) => JSON.stringify(v)).join(', ')}]`;
  return String(value);
}

/** Label.toString() of present-day Bazel: main-repository labels bare, others with a canonical `@@repo`. */
function bazelLabel(label: string): string {
  return label.startsWith('@') && !label.startsWith('@@') ? `@${label}` : label;
}
