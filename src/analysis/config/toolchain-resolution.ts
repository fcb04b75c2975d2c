import { KilnError } from '../../core/index.js';
import { Label } from '../../loading/index.js';
import type { ConstraintValue, Platform } from './platform.js';

/** A `toolchain(...)` target as resolution reads it (Bazel's DeclaredToolchainInfo). */
export interface DeclaredToolchain {
  /** The `toolchain` rule's own label (what `--extra_toolchains` and `register_toolchains` name). */
  readonly label: string;
  readonly toolchainType: string;
  /** The `toolchain` attribute: the target whose ToolchainInfo rules receive. */
  readonly implementation: string;
  readonly execConstraints: readonly ConstraintValue[];
  readonly targetConstraints: readonly ConstraintValue[];
  /** `target_settings`: config_settings that must all match the target configuration. */
  readonly targetSettings: readonly string[];
}

/** One requested toolchain type (`rule(toolchains = [...])`). */
export interface ToolchainTypeRequest {
  readonly type: string;
  readonly mandatory: boolean;
}

export interface ToolchainResolutionInput {
  /** The configured target resolution is for (messages). */
  readonly targetLabel: string;
  readonly configChecksum: string;
  readonly requests: readonly ToolchainTypeRequest[];
  readonly targetPlatform: Platform;
  /** Execution platforms in priority order: --extra_execution_platforms, registered, the host platform. */
  readonly executionPlatforms: readonly Platform[];
  /** The target's own `exec_compatible_with` (and its rule's): every candidate platform must have them. */
  readonly execConstraints: readonly ConstraintValue[];
  /** Toolchains in priority order: --extra_toolchains, then registration order. */
  readonly toolchains: readonly DeclaredToolchain[];
  /** Whether a `target_settings` config_setting matches the target configuration. */
  readonly settingMatches: (label: string) => boolean;
  /** A constraint_setting's `default_constraint_value`, which a platform without a value of it has. */
  readonly defaultValueOf: (setting: string) => string | undefined;
  /** Debug lines are kept for these toolchain types (`--toolchain_resolution_debug`). */
  readonly debugType: (type: string) => boolean;
  /** Debug lines are kept for every type of this target. */
  readonly debugTarget: boolean;
}

export interface ToolchainResolution {
  readonly executionPlatform: Platform;
  /** Requested type → the chosen toolchain; optional types without a match are absent. */
  readonly toolchains: ReadonlyMap<string, DeclaredToolchain>;
  /** Bazel's `--toolchain_resolution_debug` messages, each a block of lines. */
  readonly debug: readonly string[];
}

/** Bazel's indentation levels of a resolution trace. */
const TARGET_LEVEL = '';
const TOOLCHAIN_LEVEL = '  ';
const EXEC_LEVEL = '    ';

/** A trace of one resolution: its first line follows `INFO: `, the others are padded to line up. */
class Trace {
  readonly lines: string[] = [];
  constructor(readonly on: boolean) {}
  add(indent: string, message: string): void {
    if (!this.on) return;
    this.lines.push(`${this.lines.length === 0 ? '' : ' '.repeat('INFO: '.length)}ToolchainResolution: ${indent}${message}`);
  }
  text(): string {
    return this.lines.join('\n');
  }
}

function nameOf(label: string): string {
  return Label.parse(label).name;
}

/**
 * Toolchain resolution as bazel.build/extending/toolchains describes it (Bazel's
 * ToolchainResolutionFunction and SingleToolchainResolutionFunction): execution platforms lacking
 * the target's `exec_compatible_with` are dropped; for each requested type, each toolchain in
 * priority order whose `target_settings` match and whose `target_compatible_with` the target
 * platform satisfies is assigned to every remaining execution platform satisfying its
 * `exec_compatible_with` that has none yet; a mandatory type with no toolchain at all is
 * `No matching toolchains found for types ...`; the execution platform chosen is the first that
 * has every mandatory type, preferring one with more of the optional ones.
 */
export function resolveToolchains(input: ToolchainResolutionInput): ToolchainResolution {
  const debug: string[] = [];
  const platformValue = (platform: Platform, setting: string) => platform.constraints.get(setting) ?? input.defaultValueOf(setting);
  // A constraint a toolchain (or target) sets that the platform has another value of, or none.
  const mismatches = (constraints: readonly ConstraintValue[], platform: Platform) =>
    constraints.filter((cv) => platformValue(platform, cv.setting) !== cv.label);

  const targetTrace = new Trace(input.debugTarget || input.requests.some((r) => input.debugType(r.type)));
  const candidates: Platform[] = [];
  for (const platform of input.executionPlatforms) {
    if (candidates.some((p) => p.label === platform.label)) continue;
    const missing = mismatches(input.execConstraints, platform);
    if (missing.length === 0) candidates.push(platform);
    else
      for (const cv of missing) {
        targetTrace.add(TARGET_LEVEL, `Skipping execution platform ${platform.label} from available execution platforms, it is missing constraint ${cv.label}`);
      }
  }
  if (targetTrace.lines.length > 0) debug.push(targetTrace.text());

  // Per requested type: execution platform → toolchain.
  const available = new Map<string, Map<string, DeclaredToolchain>>();
  const missingMandatory: string[] = [];
  for (const request of input.requests) {
    const trace = new Trace(input.debugTarget || input.debugType(request.type));
    const byPlatform = new Map<string, DeclaredToolchain>();
    trace.add(TARGET_LEVEL, `Performing resolution of ${request.type} for target platform ${input.targetPlatform.label}`);
    for (const toolchain of input.toolchains) {
      if (toolchain.toolchainType !== request.type) continue;
      const unmatched = toolchain.targetSettings.filter((s) => !input.settingMatches(s));
      if (unmatched.length > 0) {
        trace.add(TOOLCHAIN_LEVEL, `Rejected toolchain ${toolchain.implementation}; mismatching config settings: ${unmatched.map(nameOf).join(', ')}`);
        continue;
      }
      const targetMismatch = mismatches(toolchain.targetConstraints, input.targetPlatform);
      if (targetMismatch.length > 0) {
        trace.add(
          TOOLCHAIN_LEVEL,
          `Rejected toolchain ${toolchain.implementation}${mismatchText(targetMismatch, (setting) => platformValue(input.targetPlatform, setting))}`,
        );
        continue;
      }
      trace.add(TOOLCHAIN_LEVEL, `Toolchain ${toolchain.implementation} is compatible with target platform, searching for execution platforms:`);
      let done = true;
      for (const platform of candidates) {
        if (byPlatform.has(platform.label)) {
          trace.add(EXEC_LEVEL, `Skipping execution platform ${platform.label}; it has already selected a toolchain`);
          continue;
        }
        const execMismatch = mismatches(toolchain.execConstraints, platform);
        if (execMismatch.length > 0) {
          trace.add(
            EXEC_LEVEL,
            `Incompatible execution platform ${platform.label}${mismatchText(execMismatch, (setting) => platformValue(platform, setting))}`,
          );
          done = false;
          continue;
        }
        trace.add(EXEC_LEVEL, `Compatible execution platform ${platform.label}`);
        byPlatform.set(platform.label, toolchain);
      }
      if (done) {
        trace.add(TOOLCHAIN_LEVEL, `All execution platforms have been assigned a ${request.type} toolchain, stopping`);
        break;
      }
    }
    if (byPlatform.size === 0) {
      trace.add(TARGET_LEVEL, `No ${request.type} toolchain found for target platform ${input.targetPlatform.label}.`);
      if (request.mandatory) missingMandatory.push(request.type);
    } else {
      trace.add(TARGET_LEVEL, `Recap of selected ${request.type} toolchains for target platform ${input.targetPlatform.label}:`);
      for (const [platform, toolchain] of byPlatform) {
        trace.add(TOOLCHAIN_LEVEL, `Selected ${toolchain.implementation} to run on execution platform ${platform}`);
      }
    }
    if (trace.on) debug.push(trace.text());
    available.set(request.type, byPlatform);
  }
  const prefix = `While resolving toolchains for target ${input.targetLabel} (${input.configChecksum}): `;
  if (missingMandatory.length > 0) {
    throw new KilnError(
      `${prefix}No matching toolchains found for types ${missingMandatory.join(', ')}.` +
        `\nTo debug, rerun with --toolchain_resolution_debug='${missingMandatory.join('|')}'` +
        '\nFor more information on platforms or toolchains see https://bazel.build/concepts/platforms-intro.',
    );
  }

  // The first suitable platform with the most toolchains (Java's stable max keeps the first of equals).
  let chosen: Platform | undefined;
  let chosenCount = -1;
  for (const platform of candidates) {
    const suitable = input.requests.every((r) => !r.mandatory || available.get(r.type)!.has(platform.label));
    if (!suitable) continue;
    const count = input.requests.filter((r) => available.get(r.type)!.has(platform.label)).length;
    if (count > chosenCount) {
      chosen = platform;
      chosenCount = count;
    }
  }
  if (!chosen) {
    const platforms = candidates.map((p) => p.label).join(', ');
    throw new KilnError(
      input.requests.length === 0
        ? `${prefix}Unable to find an execution platform for target platform ${input.targetPlatform.label} from available execution platforms [${platforms}]`
        : `${prefix}Unable to find an execution platform for toolchains [${input.requests.map((r) => r.type).join(', ')}] and target platform ${input.targetPlatform.label} from available execution platforms [${platforms}]`,
    );
  }
  const toolchains = new Map<string, DeclaredToolchain>();
  for (const r of input.requests) {
    const toolchain = available.get(r.type)!.get(chosen.label);
    if (toolchain) toolchains.set(r.type, toolchain);
  }
  if (targetTrace.on) {
    const selected = [...toolchains].map(([type, t]) => `type ${type} -> toolchain ${t.implementation}`).join(', ');
    debug.push(`ToolchainResolution: Target platform ${input.targetPlatform.label}: Selected execution platform ${chosen.label}, ${selected}`);
  }
  return { executionPlatform: chosen, toolchains, debug };
}

/** `; mismatching values: a, b; missing: s` of a rejected toolchain or platform, as Bazel words it. */
function mismatchText(mismatch: readonly ConstraintValue[], valueOf: (setting: string) => string | undefined): string {
  const values = mismatch.filter((cv) => valueOf(cv.setting) !== undefined).map((cv) => nameOf(cv.label));
  const missing = mismatch.filter((cv) => valueOf(cv.setting) === undefined).map((cv) => nameOf(cv.setting));
  return `${values.length > 0 ? `; mismatching values: ${values.join(', ')}` : ''}${missing.length > 0 ? `; missing: ${missing.join(', ')}` : ''}`;
}

/**
 * `--toolchain_resolution_debug=REGEX[,REGEX...]`: Bazel's RegexFilter over toolchain type and
 * target labels; a leading `-` excludes. The default `-.*` matches nothing.
 */
export function toolchainDebugFilter(patterns: readonly string[]): (label: string) => boolean {
  const include: RegExp[] = [];
  const exclude: RegExp[] = [];
  for (const p of patterns.flatMap((x) => x.split(','))) {
    if (p === '') continue;
    if (p.startsWith('-')) exclude.push(new RegExp(p.slice(1)));
    else include.push(new RegExp(p));
  }
  if (include.length === 0 && exclude.length === 0) return () => false;
  return (label) => (include.length === 0 || include.some((r) => r.test(label))) && !exclude.some((r) => r.test(label));
}
