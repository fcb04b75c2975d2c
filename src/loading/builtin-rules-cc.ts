/**
 * Kiln's own `@rules_cc`: `cc/defs.bzl` as rules_cc shipped it for Bazel's native C++ rules (each
 * macro forwards to `native.<rule>`), so workspaces that load their C++ rules from it load. The rules
 * Kiln builds (cc_binary, cc_library, cc_test) work; the others fail when called, saying so. A
 * workspace that declares a `rules_cc` repository of its own uses that one instead.
 */

const FORWARDED = [
  'cc_binary',
  'cc_test',
  'cc_library',
  'cc_import',
  'cc_proto_library',
  'cc_shared_library',
  'fdo_prefetch_hints',
  'fdo_profile',
  'cc_toolchain',
  'cc_toolchain_suite',
  'objc_library',
  'objc_import',
];

const DEFS_BZL = `"""Starlark rules for building C++ projects: the native rules, under rules_cc's names."""

${FORWARDED.map((name) => `def ${name}(**attrs):\n    native.${name}(**attrs)\n`).join('\n')}`;

export const RULES_CC_FILES: Readonly<Record<string, string>> = {
  'MODULE.bazel': 'module(name = "rules_cc")\n',
  BUILD: 'package(default_visibility = ["//visibility:public"])\n',
  'cc/BUILD': 'package(default_visibility = ["//visibility:public"])\n\nexports_files(["defs.bzl"])\n',
  'cc/defs.bzl': DEFS_BZL,
};
