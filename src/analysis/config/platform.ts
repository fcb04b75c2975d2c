import { KilnError, type Position } from '../../core/index.js';

/** A `constraint_value`: its own label and the label of the `constraint_setting` it belongs to. */
export interface ConstraintValue {
  readonly label: string;
  readonly setting: string;
}

/** A `platform(...)` as loading reads it, with its constraint values already resolved. */
export interface PlatformDeclaration {
  readonly label: string;
  readonly constraintValues: readonly ConstraintValue[];
  readonly parents: readonly string[];
  /** `exec_properties`: platform properties of the actions that run on it (remote execution). */
  readonly execProperties?: readonly (readonly [string, string])[];
  readonly pos?: Position;
}

/** A platform with its parents folded in: at most one value per constraint setting. */
export class Platform {
  /** constraint_setting label → constraint_value label */
  readonly constraints: ReadonlyMap<string, string>;

  constructor(
    readonly label: string,
    constraints: ReadonlyMap<string, string>,
    /** `exec_properties`, the parents' included (a child's value of a name wins). */
    readonly execProperties: ReadonlyMap<string, string> = new Map(),
  ) {
    this.constraints = constraints;
  }

  has(value: ConstraintValue): boolean {
    return this.constraints.get(value.setting) === value.label;
  }
}

/**
 * Flattens a platform and its parent chain: a constraint of the child replaces the parent's
 * value of the same constraint_setting. Bazel allows one parent at most; two values of one
 * setting in one declaration, a missing parent, and a cycle are errors.
 */
export function flattenPlatform(label: string, lookup: (label: string) => PlatformDeclaration | undefined): Platform {
  const constraints = new Map<string, string>();
  const chain: PlatformDeclaration[] = [];
  const seen = new Set<string>();
  let current: string | undefined = label;
  let referrer: PlatformDeclaration | undefined;
  while (current !== undefined) {
    if (seen.has(current)) {
      throw new KilnError(`cycle in the parents of platform ${label}: ${[...seen, current].join(' -> ')}`, referrer?.pos);
    }
    seen.add(current);
    const decl = lookup(current);
    if (!decl) {
      throw new KilnError(
        referrer ? `in parents attribute of platform rule ${referrer.label}: '${current}' is not a platform` : `'${current}' is not a platform`,
        referrer?.pos,
      );
    }
    if (decl.parents.length > 1) {
      throw new KilnError(`in parents attribute of platform rule ${decl.label}: parents attribute must have a single value`, decl.pos);
    }
    checkOneValuePerSetting(decl);
    chain.push(decl);
    referrer = decl;
    current = decl.parents[0];
  }
  // Apply the root ancestor first so that each child overrides what it inherits.
  const execProperties = new Map<string, string>();
  for (const decl of chain.reverse()) {
    for (const cv of decl.constraintValues) constraints.set(cv.setting, cv.label);
    for (const [name, value] of decl.execProperties ?? []) execProperties.set(name, value);
  }
  return new Platform(label, constraints, execProperties);
}

function checkOneValuePerSetting(decl: PlatformDeclaration): void {
  const bySetting = new Map<string, string[]>();
  for (const cv of decl.constraintValues) {
    const list = bySetting.get(cv.setting) ?? [];
    list.push(cv.label);
    bySetting.set(cv.setting, list);
  }
  const dupes = [...bySetting].filter(([, values]) => values.length > 1);
  if (dupes.length > 0) {
    const detail = dupes.map(([setting, values]) => `constraint_setting ${setting} has [${values.join(', ')}]`).join(', ');
    throw new KilnError(`in constraint_values attribute of platform rule ${decl.label}: Duplicate constraint values detected: ${detail}`, decl.pos);
  }
}

export const OS_SETTING = '@platforms//os:os';
export const CPU_SETTING = '@platforms//cpu:cpu';

/** The built-in label of the detected host platform. */
export const HOST_PLATFORM_LABEL = '@local_config_platform//:host';

/** What we know about the machine Kiln runs on (tests pass their own). */
export interface HostEnvironment {
  readonly platform: NodeJS.Platform;
  readonly arch: string;
}

export function currentHost(): HostEnvironment {
  return { platform: process.platform, arch: process.arch };
}

const OS_NAMES: Readonly<Partial<Record<NodeJS.Platform, string>>> = {
  linux: 'linux',
  darwin: 'osx',
  win32: 'windows',
  freebsd: 'freebsd',
  openbsd: 'openbsd',
  android: 'android',
};

const CPU_NAMES: Readonly<Record<string, string>> = {
  x64: 'x86_64',
  ia32: 'x86_32',
  arm64: 'aarch64',
  arm: 'arm',
  ppc64: 'ppc',
  s390x: 's390x',
  mips: 'mips64',
  riscv64: 'riscv64',
};

/** The `@platforms` constraint values of the host, as Bazel's local_config_platform detects them. */
export function hostConstraintValues(host: HostEnvironment): ConstraintValue[] {
  const out: ConstraintValue[] = [];
  const os = OS_NAMES[host.platform];
  if (os !== undefined) out.push({ label: `@platforms//os:${os}`, setting: OS_SETTING });
  const cpu = CPU_NAMES[host.arch];
  if (cpu !== undefined) out.push({ label: `@platforms//cpu:${cpu}`, setting: CPU_SETTING });
  return out;
}

/** The declaration of the detected host platform (a platform with no parents). */
export function hostPlatformDeclaration(host: HostEnvironment): PlatformDeclaration {
  return { label: HOST_PLATFORM_LABEL, constraintValues: hostConstraintValues(host), parents: [] };
}

/** Bazel's name for the host CPU, the default of `--cpu` and `--host_cpu` (`k8` on x86_64 Linux). */
export function hostCpuName(host: HostEnvironment): string {
  switch (host.platform) {
    case 'darwin':
      return host.arch === 'arm64' ? 'darwin_arm64' : 'darwin';
    case 'win32':
      return host.arch === 'arm64' ? 'arm64_windows' : 'x64_windows';
    case 'freebsd':
      return 'freebsd';
    case 'openbsd':
      return 'openbsd';
    default:
      switch (host.arch) {
        case 'x64':
          return 'k8';
        case 'ia32':
          return 'piii';
        case 'arm64':
          return 'aarch64';
        case 'ppc64':
          return 'ppc';
        default:
          return host.arch;
      }
  }
}
