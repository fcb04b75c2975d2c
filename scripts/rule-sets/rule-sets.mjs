import { chmodSync, cpSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function minimalWorkspace(name) {
  return `workspace(name = "${name}")\n\nlocal_repository(name = "bazel_skylib", path = "/usr/share/bazel/tools/skylib")\n`;
}

/**
 * Debian's packaged Bazel rule sets that test/rule-sets/ queries: where each package installs it,
 * and the WORKSPACE it is queried with. platforms and rules_java keep their own; rules_cc's and
 * rules_proto's own fetch repositories (io_bazel_rules_go, bazel_toolchains), so they get a minimal
 * one, with Debian's bazel-skylib as their @bazel_skylib.
 */
export const RULE_SETS = {
  platforms: { source: '/usr/share/bazel/tools/platforms' },
  rules_java: { source: '/usr/share/bazel/rules/java' },
  rules_cc: { source: '/usr/share/bazel/rules/cc', workspace: minimalWorkspace('rules_cc') },
  rules_proto: { source: '/usr/share/bazel/rules/proto', workspace: minimalWorkspace('rules_proto') },
};

/** Copies rule set `name` into `dest` (new or empty), writable, with its WORKSPACE; throws when its package is missing. */
export function setUpRuleSet(name, dest) {
  const { source, workspace } = RULE_SETS[name];
  if (!existsSync(join(source, 'WORKSPACE'))) throw new Error(`${source}: not installed (scripts/test-setup.d/50-bazel-rule-sets.sh)`);
  if (existsSync(dest) && readdirSync(dest).length > 0) throw new Error(`${dest} is not empty`);
  cpSync(source, dest, { recursive: true });
  const writable = (path) => {
    chmodSync(path, statSync(path).mode | 0o200);
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) writable(join(path, entry));
  };
  writable(dest);
  if (workspace !== undefined) {
    writeFileSync(join(dest, 'WORKSPACE'), workspace);
    // Its MODULE.bazel would make the workspace a module (Bzlmod) instead.
    rmSync(join(dest, 'MODULE.bazel'), { force: true });
  }
}
