/**
 * Repositories Kiln provides itself so real workspaces load unchanged: `@platforms` (the standard
 * os and cpu constraints) and `@bazel_skylib` (rules/common_settings.bzl's build settings).
 */

const OS = ['android', 'chromiumos', 'emscripten', 'freebsd', 'fuchsia', 'haiku', 'ios', 'linux', 'macos', 'netbsd', 'nixos', 'none', 'openbsd', 'qnx', 'tvos', 'uefi', 'visionos', 'vxworks', 'wasi', 'watchos', 'windows'];
const CPU = ['aarch32', 'aarch64', 'arm64_32', 'arm64e', 'armv6-m', 'armv7', 'armv7-m', 'armv7e-m', 'armv7e-mf', 'armv7k', 'armv8-m', 'cortex-r52', 'cortex-r82', 'i386', 'mips64', 'ppc', 'ppc32', 'ppc64le', 'riscv32', 'riscv64', 's390x', 'wasm32', 'wasm64', 'x86_32', 'x86_64'];

function constraintPackage(setting: string, values: readonly string[], aliases: Record<string, string> = {}): string {
  let s = `package(default_visibility = ["//visibility:public"])\n\nconstraint_setting(name = "${setting}")\n`;
  for (const v of values) s += `\nconstraint_value(\n    name = "${v}",\n    constraint_setting = ":${setting}",\n)\n`;
  for (const [name, actual] of Object.entries(aliases)) s += `\nalias(\n    name = "${name}",\n    actual = ":${actual}",\n)\n`;
  return s;
}

const SETTINGS = ['string_flag', 'bool_flag', 'int_flag', 'string_list_flag', 'string_setting', 'bool_setting', 'int_setting', 'string_list_setting'];

export const BUILTIN_REPOSITORIES: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map<string, Record<string, string>>([
  [
    'platforms',
    {
      'MODULE.bazel': 'module(name = "platforms")\n',
      'BUILD.bazel': 'package(default_visibility = ["//visibility:public"])\n\nexports_files(["LICENSE"])\n\nplatform(name = "host")\n',
      'LICENSE': 'Apache License 2.0\n',
      'os/BUILD': constraintPackage('os', OS, { osx: 'macos' }),
      'cpu/BUILD': constraintPackage('cpu', CPU),
    },
  ],
  [
    'bazel_skylib',
    {
      'MODULE.bazel': 'module(name = "bazel_skylib")\n',
      'BUILD': '',
      'rules/BUILD': 'exports_files(["common_settings.bzl"])\n',
      'rules/common_settings.bzl':
        '"""Common build settings (Kiln built-in; same rule names and attributes as bazel_skylib)."""\n\n' +
        'BuildSettingInfo = provider(doc = "A singleton provider that contains the raw value of a build setting", fields = ["value"])\n\n' +
        SETTINGS.map((s) => `${s} = native.${s}\n`).join(''),
    },
  ],
]);
