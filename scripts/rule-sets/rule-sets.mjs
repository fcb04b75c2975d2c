/** Debian's packaged Bazel rule sets that test/rule-sets/ queries: name, and where the package installs it. */
export const RULE_SETS = {
  platforms: '/usr/share/bazel/tools/platforms',
  rules_java: '/usr/share/bazel/rules/java',
  rules_cc: '/usr/share/bazel/rules/cc',
  rules_proto: '/usr/share/bazel/rules/proto',
};
