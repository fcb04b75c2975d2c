import { createConfigurations, type ConfigurationPair } from '../../../src/analysis/config/build-configuration.js';
import type { ConstraintValue, HostEnvironment, PlatformDeclaration } from '../../../src/analysis/config/platform.js';
import { BuildOptionsParser } from '../../../src/analysis/options/parse-build-options.js';

/** A fixed host so tests do not depend on the machine that runs them. */
export const LINUX_X64: HostEnvironment = { platform: 'linux', arch: 'x64' };

export const cv = (setting: string, value: string): ConstraintValue => ({ label: value, setting });

export const LINUX = cv('@platforms//os:os', '@platforms//os:linux');
export const OSX = cv('@platforms//os:os', '@platforms//os:osx');
export const X86_64 = cv('@platforms//cpu:cpu', '@platforms//cpu:x86_64');
export const ARM64 = cv('@platforms//cpu:cpu', '@platforms//cpu:aarch64');
export const GLIBC = cv('//libc:libc', '//libc:glibc');

export const PLATFORMS: readonly PlatformDeclaration[] = [
  { label: '//p:linux_arm', constraintValues: [LINUX, ARM64], parents: [] },
  { label: '//p:mac_arm', constraintValues: [OSX], parents: ['//p:linux_arm'] },
  { label: '//p:linux_arm_glibc', constraintValues: [GLIBC], parents: ['//p:linux_arm'] },
];

/** Configurations from command-line words (after rc words, when given). */
export function configs(args: string[], rc: string[] = []): ConfigurationPair {
  const { options } = new BuildOptionsParser().parse(rc).parse(args).result();
  return createConfigurations(options, { host: LINUX_X64, platforms: (l) => PLATFORMS.find((p) => p.label === l) });
}
