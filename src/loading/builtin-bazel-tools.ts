import { RUNFILES_BASH } from './builtin-bazel-tools-runfiles.js';
import { CPP_RUNFILES_FILES } from './builtin-bazel-tools-cpp-runfiles.js';

/**
 * Kiln's own `@bazel_tools`: the parts of Bazel's built-in repository that real rule sets load,
 * written for Kiln. The Bash runfiles library, `src/conditions` (config_settings over @platforms
 * constraints), the sh, cpp and jdk toolchain types with the cpp labels rule sets name, the
 * `tools/build_defs/repo` loaders (they load; a rule that needs a download fails when called, naming
 * what it would have fetched, since Kiln downloads nothing), `tools/build_defs/cc:action_names.bzl`
 * and the `tools/test` filegroups test rules name. A workspace's own `bazel_tools` repository wins.
 */

const PUBLIC = 'package(default_visibility = ["//visibility:public"])\n';

/** `src/conditions`: one config_setting per platform, on @platforms constraints. */
const CONDITIONS: readonly (readonly [string, readonly string[]])[] = [
  ['host_windows', ['@platforms//os:windows']],
  ['host_windows_x64_constraint', ['@platforms//os:windows', '@platforms//cpu:x86_64']],
  ['host_windows_arm64_constraint', ['@platforms//os:windows', '@platforms//cpu:aarch64']],
  ['windows', ['@platforms//os:windows']],
  ['windows_x64', ['@platforms//os:windows', '@platforms//cpu:x86_64']],
  ['windows_arm64', ['@platforms//os:windows', '@platforms//cpu:aarch64']],
  ['darwin', ['@platforms//os:macos']],
  ['darwin_x86_64', ['@platforms//os:macos', '@platforms//cpu:x86_64']],
  ['darwin_arm64', ['@platforms//os:macos', '@platforms//cpu:aarch64']],
  ['darwin_arm64e', ['@platforms//os:macos', '@platforms//cpu:arm64e']],
  ['ios', ['@platforms//os:ios']],
  ['watchos', ['@platforms//os:watchos']],
  ['tvos', ['@platforms//os:tvos']],
  ['visionos', ['@platforms//os:visionos']],
  ['freebsd', ['@platforms//os:freebsd']],
  ['openbsd', ['@platforms//os:openbsd']],
  ['emscripten', ['@platforms//os:emscripten']],
  ['android', ['@platforms//os:android']],
  ['linux', ['@platforms//os:linux']],
  ['linux_x86_64', ['@platforms//os:linux', '@platforms//cpu:x86_64']],
  ['linux_aarch64', ['@platforms//os:linux', '@platforms//cpu:aarch64']],
  ['linux_arm', ['@platforms//os:linux', '@platforms//cpu:armv7']],
  ['linux_ppc', ['@platforms//os:linux', '@platforms//cpu:ppc']],
  ['linux_ppc64le', ['@platforms//os:linux', '@platforms//cpu:ppc64le']],
  ['linux_s390x', ['@platforms//os:linux', '@platforms//cpu:s390x']],
  ['linux_mips64', ['@platforms//os:linux', '@platforms//cpu:mips64']],
  ['linux_riscv64', ['@platforms//os:linux', '@platforms//cpu:riscv64']],
  ['arm', ['@platforms//cpu:armv7']],
  ['aarch64', ['@platforms//cpu:aarch64']],
  ['x86_64', ['@platforms//cpu:x86_64']],
  ['ppc', ['@platforms//cpu:ppc']],
  ['s390x', ['@platforms//cpu:s390x']],
];

function conditionsBuild(): string {
  let s = `${PUBLIC}\n# Platform conditions of Bazel's @bazel_tools//src/conditions, as constraint_values on @platforms.\n`;
  for (const [name, constraints] of CONDITIONS) {
    s += `\nconfig_setting(\n    name = "${name}",\n    constraint_values = [${constraints.map((c) => `"${c}"`).join(', ')}],\n)\n`;
  }
  return s;
}

/** What every repository loader says when it would need a download. */
const REPO_LOADER_HELPERS = `def _fetch_fails(kind, name, what):
    fail("%s(name = %r) would fetch %s: Kiln does not download external repositories; declare it with local_repository (WORKSPACE) or local_path_override (MODULE.bazel)" % (kind, name, what))

def _urls(url, urls):
    out = list(urls or [])
    if url:
        out.insert(0, url)
    return ", ".join(out) if out else "nothing (no url given)"
`;

const HTTP_BZL = `"""Rules for downloading files and archives over HTTP (Kiln's @bazel_tools).

They load as Bazel's do; Kiln fetches no external repositories, so calling one fails, naming the URLs it
would have fetched.
"""

${REPO_LOADER_HELPERS}
def http_archive(name, url = None, urls = [], sha256 = None, integrity = None, strip_prefix = None, type = None, build_file = None, build_file_content = None, workspace_file = None, workspace_file_content = None, patches = [], patch_args = [], patch_cmds = [], patch_tool = None, netrc = None, auth_patterns = {}, canonical_id = None, add_prefix = None, remote_file_urls = {}, remote_file_integrity = {}, remote_patches = {}, remote_patch_strip = 0, patch_strip = 0, patch_cmds_win = [], repo_mapping = None, **kwargs):
    """Downloads a Bazel repository as a compressed archive file, decompresses it, and makes its targets available."""
    _fetch_fails("http_archive", name, _urls(url, urls))

def http_file(name, url = None, urls = [], sha256 = None, integrity = None, executable = False, downloaded_file_path = "downloaded", canonical_id = None, netrc = None, auth_patterns = {}, **kwargs):
    """Downloads a file from a URL and makes it available to be used as a file group."""
    _fetch_fails("http_file", name, _urls(url, urls))

def http_jar(name, url = None, urls = [], sha256 = None, integrity = None, downloaded_file_name = None, canonical_id = None, netrc = None, auth_patterns = {}, **kwargs):
    """Downloads a jar from a URL and makes it available as java_import."""
    _fetch_fails("http_jar", name, _urls(url, urls))
`;

const GIT_BZL = `"""Rules for cloning external git repositories (Kiln's @bazel_tools).

They load as Bazel's do; Kiln fetches no external repositories, so calling one fails, naming the remote
it would have cloned.
"""

${REPO_LOADER_HELPERS}
def git_repository(name, remote = None, commit = None, tag = None, branch = None, shallow_since = None, init_submodules = False, recursive_init_submodules = False, strip_prefix = None, patches = [], patch_args = [], patch_cmds = [], patch_tool = None, build_file = None, build_file_content = None, workspace_file = None, workspace_file_content = None, verbose = False, **kwargs):
    """Clones an external git repository."""
    _fetch_fails("git_repository", name, "%s (%s)" % (remote, commit or tag or branch or "HEAD"))

def new_git_repository(name, remote = None, commit = None, tag = None, branch = None, shallow_since = None, init_submodules = False, recursive_init_submodules = False, strip_prefix = None, patches = [], patch_args = [], patch_cmds = [], patch_tool = None, build_file = None, build_file_content = None, workspace_file = None, workspace_file_content = None, verbose = False, **kwargs):
    """Clones an external git repository and adds a BUILD file to it."""
    _fetch_fails("new_git_repository", name, "%s (%s)" % (remote, commit or tag or branch or "HEAD"))
`;

const UTILS_BZL = `"""Utils for manipulating external repositories (Kiln's @bazel_tools).

\`maybe\` and \`update_attrs\` work as Bazel's; the helpers that take a repository context fail when
called, since Kiln runs no repository rules.
"""

def maybe(repo_rule, name, **kwargs):
    """Defines a repository only if it is not defined yet."""
    if not native.existing_rule(name):
        repo_rule(name = name, **kwargs)

def update_attrs(orig, keys, override):
    """Returns a dict of the attributes in \`keys\` of \`orig\`, with \`override\` applied, when something was overridden."""
    result = {}
    for key in keys:
        if getattr(orig, key, None) != None:
            result[key] = getattr(orig, key)
    result["name"] = orig.name
    result.update(override)
    return result

def _needs_repository_context(fn):
    fail("%s needs a repository context: Kiln runs no repository rules" % fn)

def workspace_and_buildfile(ctx):
    _needs_repository_context("workspace_and_buildfile")

def patch(ctx, patches = None, patch_cmds = None, patch_cmds_win = None, patch_tool = None, patch_args = None, auth = None):
    _needs_repository_context("patch")

def download_remote_files(ctx, auth = None):
    _needs_repository_context("download_remote_files")

def read_netrc(ctx, filename):
    _needs_repository_context("read_netrc")

def read_user_netrc(ctx):
    _needs_repository_context("read_user_netrc")

def use_netrc(netrc, urls, patterns):
    _needs_repository_context("use_netrc")

def get_auth(ctx, urls):
    _needs_repository_context("get_auth")
`;

/** Bazel's C++ action names (tools/build_defs/cc/action_names.bzl): plain constants. */
const ACTION_NAMES: readonly (readonly [string, string])[] = [
  ['c_compile', 'c-compile'],
  ['cpp_compile', 'c++-compile'],
  ['linkstamp_compile', 'linkstamp-compile'],
  ['cc_flags_make_variable', 'cc-flags-make-variable'],
  ['cpp_module_codegen', 'c++-module-codegen'],
  ['cpp_header_analysis', 'c++-header-analysis'],
  ['cpp_header_parsing', 'c++-header-parsing'],
  ['cpp_module_deps_scanning', 'c++-module-deps-scanning'],
  ['cpp20_module_compile', 'c++20-module-compile'],
  ['cpp20_module_codegen', 'c++20-module-codegen'],
  ['cpp_module_compile', 'c++-module-compile'],
  ['assemble', 'assemble'],
  ['preprocess_assemble', 'preprocess-assemble'],
  ['llvm_cov', 'llvm-cov'],
  ['lto_indexing', 'lto-indexing'],
  ['lto_backend', 'lto-backend'],
  ['lto_index_for_executable', 'lto-index-for-executable'],
  ['lto_index_for_dynamic_library', 'lto-index-for-dynamic-library'],
  ['lto_index_for_nodeps_dynamic_library', 'lto-index-for-nodeps-dynamic-library'],
  ['cpp_link_executable', 'c++-link-executable'],
  ['cpp_link_dynamic_library', 'c++-link-dynamic-library'],
  ['cpp_link_nodeps_dynamic_library', 'c++-link-nodeps-dynamic-library'],
  ['cpp_link_static_library', 'c++-link-static-library'],
  ['strip', 'strip'],
  ['objc_compile', 'objc-compile'],
  ['objc_executable', 'objc-executable'],
  ['objc_fully_link', 'objc-fully-link'],
  ['objcpp_compile', 'objc++-compile'],
  ['clif_match', 'clif-match'],
  ['validate_static_library', 'validate-static-library'],
];

function actionNamesBzl(): string {
  let s = '"""Names of the C++ toolchain\'s actions (action_config names), as Bazel\'s @bazel_tools defines them."""\n\n';
  for (const [k, v] of ACTION_NAMES) s += `${k.toUpperCase()}_ACTION_NAME = "${v}"\n`;
  s += '\nACTION_NAMES = struct(\n';
  for (const [k] of ACTION_NAMES) s += `    ${k} = ${k.toUpperCase()}_ACTION_NAME,\n`;
  s += ')\n';
  return s;
}

const TOOLCHAIN_UTILS_BZL = `"""Finding the C++ toolchain (Kiln's @bazel_tools): Kiln's C++ rules call the host compiler directly, with no CcToolchainInfo."""

CPP_TOOLCHAIN_TYPE = "@bazel_tools//tools/cpp:toolchain_type"

def find_cpp_toolchain(ctx, *, mandatory = True):
    """Bazel returns the C++ toolchain's CcToolchainInfo; Kiln has none."""
    fail("find_cpp_toolchain is not supported by Kiln")

def use_cpp_toolchain(mandatory = False):
    """The toolchain requirement for rule(toolchains = ...)."""
    return [config_common.toolchain_type(CPP_TOOLCHAIN_TYPE, mandatory = mandatory)]
`;

const CPP_BUILD = `${PUBLIC}
exports_files(["toolchain_utils.bzl"])

toolchain_type(name = "toolchain_type")

toolchain_type(name = "test_runner_toolchain_type")

# Labels rule sets name, so their BUILD files and attribute defaults load. Kiln's C++ rules use the
# host compiler without a toolchain target: these are empty stand-ins.
filegroup(name = "current_cc_toolchain")

filegroup(name = "optional_current_cc_toolchain")

filegroup(name = "current_cc_host_toolchain")

filegroup(name = "cc_flags")

filegroup(name = "toolchain")

filegroup(name = "malloc")

filegroup(name = "link_extra_lib")

filegroup(name = "link_extra_libs")

filegroup(name = "grep-includes")

filegroup(name = "interface_library_builder")

filegroup(name = "link_dynamic_library")

filegroup(name = "build_interface_so")
`;

const TEST_BUILD = `${PUBLIC}
# What test rules name as implicit dependencies. Kiln's test actions bring their own setup (Bazel's
# test-setup.sh and generate-xml.sh, written in src/analysis/rules/test-setup-script.ts); these
# targets exist so rules that name them load and analyse.
exports_files(["test-setup.sh", "generate-xml.sh", "collect_coverage.sh"])

filegroup(name = "test_setup", srcs = ["test-setup.sh"])

filegroup(name = "test_xml_generator", srcs = ["generate-xml.sh"])

filegroup(name = "collect_coverage", srcs = ["collect_coverage.sh"])

filegroup(name = "runtime", srcs = [":test_setup", ":test_xml_generator"])

filegroup(name = "test_wrapper", srcs = [":test_setup"])

filegroup(name = "xml_writer")

filegroup(name = "coverage_support")

filegroup(name = "coverage_report_generator")

filegroup(name = "lcov_merger")
`;

const TEST_SETUP_SH = `#!/usr/bin/env bash
# Kiln's stand-in for Bazel's test-setup.sh: Kiln's test actions set up the test environment
# themselves, so this only runs the test it is given.
exec "$@"
`;

const GENERATE_XML_SH = `#!/usr/bin/env bash
# Kiln's stand-in for Bazel's generate-xml.sh: Kiln's test actions write test.xml themselves.
exit 0
`;

const COLLECT_COVERAGE_SH = `#!/usr/bin/env bash
# Kiln's stand-in for Bazel's collect_coverage.sh: Kiln collects no coverage; this runs the test.
exec "$@"
`;

export const BAZEL_TOOLS_FILES: Readonly<Record<string, string>> = {
  'MODULE.bazel': 'module(name = "bazel_tools")\n',
  BUILD: `${PUBLIC}`,
  'tools/BUILD': `${PUBLIC}`,
  'tools/bash/runfiles/BUILD': `${PUBLIC}\nexports_files(["runfiles.bash"])\n\nsh_library(\n    name = "runfiles",\n    srcs = ["runfiles.bash"],\n)\n`,
  'tools/bash/runfiles/runfiles.bash': RUNFILES_BASH,
  'tools/sh/BUILD': `${PUBLIC}\ntoolchain_type(name = "toolchain_type")\n`,
  'tools/cpp/BUILD': CPP_BUILD,
  ...CPP_RUNFILES_FILES,
  'tools/cpp/toolchain_utils.bzl': TOOLCHAIN_UTILS_BZL,
  'tools/jdk/BUILD': `${PUBLIC}\ntoolchain_type(name = "toolchain_type")\n\ntoolchain_type(name = "runtime_toolchain_type")\n\nfilegroup(name = "current_java_toolchain")\n\nfilegroup(name = "current_java_runtime")\n\nfilegroup(name = "current_host_java_runtime")\n`,
  'tools/python/BUILD': `${PUBLIC}\ntoolchain_type(name = "toolchain_type")\n`,
  'tools/test/BUILD': TEST_BUILD,
  'tools/test/test-setup.sh': TEST_SETUP_SH,
  'tools/test/generate-xml.sh': GENERATE_XML_SH,
  'tools/test/collect_coverage.sh': COLLECT_COVERAGE_SH,
  'tools/build_defs/BUILD': `${PUBLIC}`,
  'tools/build_defs/repo/BUILD': `${PUBLIC}\nexports_files(["http.bzl", "git.bzl", "utils.bzl"])\n`,
  'tools/build_defs/repo/http.bzl': HTTP_BZL,
  'tools/build_defs/repo/git.bzl': GIT_BZL,
  'tools/build_defs/repo/utils.bzl': UTILS_BZL,
  'tools/build_defs/cc/BUILD': `${PUBLIC}\nexports_files(["action_names.bzl"])\n`,
  'tools/build_defs/cc/action_names.bzl': actionNamesBzl(),
  'tools/allowlists/BUILD': `${PUBLIC}`,
  // What Starlark rules with transitions name as `_allowlist_function_transition` (everyone may use them).
  'tools/allowlists/function_transition_allowlist/BUILD': 'package_group(\n    name = "function_transition_allowlist",\n    packages = ["//..."],\n)\n',
  'src/BUILD': `${PUBLIC}`,
  'src/conditions/BUILD': conditionsBuild(),
};
