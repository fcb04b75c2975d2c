import { BAZEL_TOOLS_FILES } from './builtin-bazel-tools.js';
import { RULES_CC_FILES } from './builtin-rules-cc.js';
import { BAZEL_SKYLIB_FILES } from './builtin-skylib.js';

/**
 * Repositories Kiln provides itself so real workspaces load unchanged: `@platforms` (the standard
 * os and cpu constraints), `@bazel_skylib` (builtin-skylib.ts) and `@bazel_tools` (builtin-bazel-tools.ts).
 */

const OS = [
  'android',
  'chromiumos',
  'emscripten',
  'freebsd',
  'fuchsia',
  'haiku',
  'ios',
  'linux',
  'macos',
  'netbsd',
  'nixos',
  'none',
  'openbsd',
  'qnx',
  'tvos',
  'uefi',
  'visionos',
  'vxworks',
  'wasi',
  'watchos',
  'windows',
];
const CPU = [
  'aarch32',
  'aarch64',
  'arm64_32',
  'arm64e',
  'armv6-m',
  'armv7',
  'armv7-m',
  'armv7e-m',
  'armv7e-mf',
  'armv7k',
  'armv8-m',
  'cortex-r52',
  'cortex-r82',
  'i386',
  'mips64',
  'ppc',
  'ppc32',
  'ppc64le',
  'riscv32',
  'riscv64',
  's390x',
  'wasm32',
  'wasm64',
  'x86_32',
  'x86_64',
];

function constraintPackage(setting: string, values: readonly string[], aliases: Record<string, string> = {}): string {
  let s = `package(default_visibility = ["//visibility:public"])\n\nconstraint_setting(name = "${setting}")\n`;
  for (const v of values) s += `\nconstraint_value(\n    name = "${v}",\n    constraint_setting = ":${setting}",\n)\n`;
  for (const [name, actual] of Object.entries(aliases)) s += `\nalias(\n    name = "${name}",\n    actual = ":${actual}",\n)\n`;
  return s;
}

export const BUILTIN_REPOSITORIES: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map<string, Record<string, string>>([
  [
    'platforms',
    {
      'MODULE.bazel': 'module(name = "platforms")\n',
      'BUILD.bazel': 'package(default_visibility = ["//visibility:public"])\n\nexports_files(["LICENSE"])\n\nplatform(name = "host")\n',
      LICENSE: 'Apache License 2.0\n',
      'os/BUILD': constraintPackage('os', OS, { osx: 'macos' }),
      'cpu/BUILD': constraintPackage('cpu', CPU),
    },
  ],
  ['bazel_skylib', BAZEL_SKYLIB_FILES],
  ['bazel_tools', BAZEL_TOOLS_FILES],
  ['rules_cc', RULES_CC_FILES],
]);
