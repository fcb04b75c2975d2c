import { describe, expect, it } from 'vitest';
import { errorsOf, loadFixture } from './load-helper.js';

/**
 * The top-level names of a present-day Bazel .bzl file (bazel.build/rules/lib/globals/bzl, the
 * top-level modules and providers of BazelRuleClassProvider, builtins' exported_toplevels), read
 * from Bazel's documentation and source, not from Kiln's own tables.
 */
const BZL_NAMES = [
  // Global functions of .bzl files.
  'analysis_test_transition',
  'aspect',
  'configuration_field',
  'depset',
  'exec_group',
  'exec_transition',
  'macro',
  'module_extension',
  'provider',
  'repository_rule',
  'rule',
  'select',
  'subrule',
  'tag_class',
  'transition',
  'visibility',
  'struct',
  'json',
  'Label',
  // Top-level modules.
  'apple_common',
  'attr',
  'cc_common',
  'config',
  'config_common',
  'coverage_common',
  'java_common',
  'native',
  'platform_common',
  'proto',
  'proto_common_do_not_use',
  'testing',
  'cc_proto_aspect',
  // Providers.
  'AnalysisFailureInfo',
  'AnalysisTestResultInfo',
  'CcInfo',
  'CcSharedLibraryHintInfo',
  'CcSharedLibraryInfo',
  'CcToolchainConfigInfo',
  'DebugPackageInfo',
  'DefaultInfo',
  'InstrumentedFilesInfo',
  'JavaInfo',
  'JavaPluginInfo',
  'OutputGroupInfo',
  'PackageSpecificationInfo',
  'ProguardSpecProvider',
  'ProtoInfo',
  'PyInfo',
  'PyRuntimeInfo',
  'RunEnvironmentInfo',
  'Actions',
];

/** Names of a present-day BUILD file besides the native rules (StarlarkLibrary.BUILD, StarlarkNativeModule). */
const BUILD_NAMES = [
  'package',
  'licenses',
  'exports_files',
  'glob',
  'existing_rule',
  'existing_rules',
  'package_name',
  'repository_name',
  'package_relative_label',
  'module_name',
  'module_version',
  'subpackages',
  'package_group',
  'environment_group',
  'select',
  'depset',
  'struct',
  'json',
  'Label',
];

/** Native rules of present-day Bazel (the build encyclopedia's rule list). */
const NATIVE_RULES = [
  'alias',
  'config_setting',
  'filegroup',
  'genquery',
  'genrule',
  'test_suite',
  'constraint_setting',
  'constraint_value',
  'platform',
  'toolchain',
  'toolchain_type',
  'sh_binary',
  'sh_library',
  'sh_test',
  'cc_binary',
  'cc_import',
  'cc_library',
  'cc_shared_library',
  'cc_static_library',
  'cc_test',
  'cc_toolchain',
  'cc_toolchain_suite',
  'fdo_prefetch_hints',
  'fdo_profile',
  'memprof_profile',
  'propeller_optimize',
  'java_binary',
  'java_import',
  'java_library',
  'java_plugin',
  'java_runtime',
  'java_test',
  'java_toolchain',
  'java_package_configuration',
  'proto_library',
  'proto_lang_toolchain',
  'py_binary',
  'py_library',
  'py_runtime',
  'py_test',
  'objc_import',
  'objc_library',
  'available_xcodes',
  'xcode_config',
  'xcode_version',
  'action_listener',
  'extra_action',
  'starlark_doc_extract',
  'label_flag',
  'label_setting',
];

const list = (names: readonly string[]) => `[\n${names.map((n) => `    ${n},\n`).join('')}]`;

describe('predeclared names', () => {
  it('a .bzl file mentioning every predeclared name of present-day Bazel loads, and so does the BUILD file loading it', () => {
    const { pkg } = loadFixture({
      'pkg/BUILD': `load(":all.bzl", "ALL", "NATIVE")\n\nBUILD_NAMES = ${list([...BUILD_NAMES, ...NATIVE_RULES])}\n\nfilegroup(name = "f")\n`,
      'pkg/all.bzl': `ALL = ${list(BZL_NAMES)}\n\nNATIVE = ${list([...BUILD_NAMES.filter((n) => !['package', 'licenses', 'select', 'depset', 'struct', 'json', 'Label', 'environment_group'].includes(n)), ...NATIVE_RULES].map((n) => `native.${n}`))}\n`,
    });
    expect(errorsOf(pkg)).toEqual([]);
    expect(pkg.targets.has('f')).toBe(true);
  });

  it('calling a name Kiln does not honour fails at the call, saying so; merely loading it does not', () => {
    const bzl = [
      'TOP = [cc_common.CcToolchainInfo, CcInfo, apple_common.platform_type]', // fields of placeholders load
      'HAS = hasattr(cc_common, "compile")',
      'def _impl(ctx):',
      '    return []',
      'r = rule(implementation = _impl, attrs = {"deps": attr.label_list(providers = [CcInfo])})',
      'def compile_it():',
      '    return cc_common.compile(name = "x")',
      'def make_info():',
      '    return CcInfo()',
      'def field():',
      '    return configuration_field(fragment = "cpp", name = "cc_toolchain")',
      '',
    ].join('\n');
    const build = (call: string) => ({
      'pkg/BUILD': `load(":defs.bzl", "r", "compile_it", "make_info", "field")\nr(name = "ok")\n${call}\n`,
      'pkg/defs.bzl': bzl,
    });
    expect(errorsOf(loadFixture(build('')).pkg)).toEqual([]);
    expect(errorsOf(loadFixture(build('compile_it()')).pkg)).toEqual(['pkg/defs.bzl:7:29: cc_common.compile is not supported by Kiln']);
    expect(errorsOf(loadFixture(build('make_info()')).pkg)).toEqual(['pkg/defs.bzl:9:18: CcInfo is not supported by Kiln']);
    expect(errorsOf(loadFixture(build('field()')).pkg)).toEqual(['pkg/defs.bzl:11:31: configuration_field is not supported by Kiln']);
    // A native rule Kiln has no class for: the BUILD file loads up to the call.
    const { pkg } = loadFixture({ 'pkg/BUILD': 'filegroup(name = "before")\n\njava_library(\n    name = "lib",\n    srcs = ["A.java"],\n)\n' });
    expect(errorsOf(pkg)).toEqual(['pkg/BUILD:3:13: java_library is not supported by Kiln']);
    expect(pkg.targets.has('before')).toBe(true);
    expect(errorsOf(loadFixture({ 'pkg/BUILD': 'native_x = 1\n', 'pkg/a.bzl': 'def f():\n    native.java_library(name = "j")\n' }).pkg)).toEqual([]);
  });

  it("refuses analysis_test_transition on a rule that is no analysis test, in Bazel's words", () => {
    const defs = [
      'T = analysis_test_transition(settings = {"//command_line_option:compilation_mode": "opt"})',
      'def _impl(ctx):',
      '    return []',
      'plain_test = rule(implementation = _impl, test = True, attrs = {"dep": attr.label(cfg = T)})',
      '',
    ].join('\n');
    const { pkg } = loadFixture({ 'pkg/BUILD': 'load(":defs.bzl", "plain_test")\n', 'pkg/defs.bzl': defs });
    expect(errorsOf(pkg)).toEqual([
      'pkg/defs.bzl:4:18: Only rule definitions with analysis_test=True may have attributes with analysis_test_transition transitions',
    ]);
  });

  it('honours the providers and values present-day Bazel rule sets use at load time', () => {
    const checks = [
      'def check(got, want, what):',
      '    if got != want:',
      '        fail("%s: got %r, want %r" % (what, got, want))',
      'r = RunEnvironmentInfo(environment = {"A": "1"}, inherited_environment = ["HOME"])',
      'check(r.environment, {"A": "1"}, "environment")',
      'check(r.inherited_environment, ["HOME"], "inherited_environment")',
      'check(RunEnvironmentInfo().environment, {}, "default environment")',
      't = testing.TestEnvironment({"B": "2"})',
      'check(type(t), "struct", "TestEnvironment type")',
      'check(t.environment, {"B": "2"}, "TestEnvironment environment")',
      'e = testing.ExecutionInfo({"requires-network": ""})',
      'check(e.requirements, {"requires-network": ""}, "requirements")',
      'check(e.exec_group, "test", "exec_group")',
      'a = AnalysisTestResultInfo(success = False, message = "no")',
      'check((a.success, a.message), (False, "no"), "AnalysisTestResultInfo")',
      'v = platform_common.TemplateVariableInfo({"CC": "gcc"})',
      'check(v.variables, {"CC": "gcc"}, "TemplateVariableInfo")',
      'ti = platform_common.ToolchainInfo(compiler = "cc", flags = ["-O"])',
      'check(ti.flags, ["-O"], "ToolchainInfo")',
      'tt = config_common.toolchain_type("//tools:t", mandatory = False)',
      'check((str(tt.toolchain_type), tt.mandatory), ("//tools:t", False), "toolchain_type")',
      'check(config_common.toolchain_type(":t").mandatory, True, "mandatory default")',
      'i = coverage_common.instrumented_files_info(None, source_attributes = ["srcs"])',
      'check(type(i), "struct", "instrumented_files_info")',
      'f = AnalysisFailureInfo(causes = depset([]))',
      'check(f.causes.to_list(), [], "AnalysisFailureInfo")',
      'T = analysis_test_transition(settings = {"//command_line_option:compilation_mode": "opt"})',
      'check(type(T), "transition", "analysis_test_transition")',
      'def _impl(ctx):',
      '    return []',
      'my_test = rule(',
      '    implementation = _impl,',
      '    test = True,',
      // Bazel rejects an analysis_test_transition on a rule that is no analysis test.
      '    analysis_test = True,',
      '    attrs = {"dep": attr.label(cfg = T), "other": attr.label(cfg = transition(implementation = lambda s, a: {}, inputs = [], outputs = []))},',
      '    toolchains = [tt, "//tools:u"],',
      '    exec_groups = {"link": exec_group(toolchains = [tt], exec_compatible_with = ["@platforms//os:linux"])},',
      ')',
      'sub = subrule(implementation = _impl)',
      '',
    ].join('\n');
    const { pkg } = loadFixture({ 'pkg/BUILD': 'load(":defs.bzl", "my_test")\n\nmy_test(name = "t")\n', 'pkg/defs.bzl': checks });
    expect(errorsOf(pkg)).toEqual([]);
    expect(pkg.targets.get('t')?.kind).toBe('rule');
  });

  it("checks the honoured providers' fields with Bazel's parameter errors", () => {
    const err = (line: string) => errorsOf(loadFixture({ 'pkg/BUILD': 'load(":d.bzl", "x")\n', 'pkg/d.bzl': `x = ${line}\n` }).pkg);
    expect(err('RunEnvironmentInfo(environment = ["A"])')).toEqual([
      "pkg/d.bzl:1:23: in call to RunEnvironmentInfo(), parameter 'environment' got value of type 'list', want 'dict of strings'",
    ]);
    expect(err('AnalysisTestResultInfo(success = "yes", message = "")')).toEqual([
      "pkg/d.bzl:1:27: in call to AnalysisTestResultInfo(), parameter 'success' got value of type 'string', want 'bool'",
    ]);
    expect(err('config_common.toolchain_type("//tools:t", mandatory = 1)')).toEqual([
      'pkg/d.bzl:1:33: toolchain_type: for parameter mandatory: got int, want bool',
    ]);
    expect(err('subrule(implementation = lambda ctx: None)()')).toEqual(['pkg/d.bzl:1:47: subrule is not supported by Kiln']);
  });

  it('BUILD-file functions: package_relative_label, module_name, module_version, subpackages', () => {
    const { pkg } = loadFixture({
      'MODULE.bazel': 'module(name = "my_module", version = "1.0")\n',
      'pkg/BUILD': [
        'genrule(',
        '    name = "g",',
        '    outs = ["o"],',
        '    cmd = " ".join([str(package_relative_label(":x")), str(package_relative_label(Label("//a:b"))), module_name(), str(module_version())] + subpackages(include = ["**"])),',
        ')',
        '',
      ].join('\n'),
      'pkg/sub/BUILD': '',
      'pkg/sub/deeper/BUILD': '',
      'pkg/other/BUILD': '',
      'pkg/plain/file.txt': '',
    });
    expect(errorsOf(pkg)).toEqual([]);
    const g = pkg.targets.get('g');
    expect(g?.kind === 'rule' && g.attrs.get('cmd')).toBe('//pkg:x //a:b my_module None other sub');
    const empty = loadFixture({ 'pkg/BUILD': 'x = subpackages(include = ["nothing*"])\n' }).pkg;
    expect(errorsOf(empty)).toEqual(["pkg/BUILD:1:16: subpackages pattern 'nothing*' didn't match anything, but allow_empty is set to False"]);
  });

  it("package(default_testonly = 1) takes an int for the bool, as Bazel does (bazel-skylib 1.0.3's tests write it)", () => {
    const { pkg } = loadFixture({ 'pkg/BUILD': 'package(default_testonly = 1)\n' });
    expect(errorsOf(pkg)).toEqual([]);
    expect(pkg.defaults.testonly).toBe(true);
    expect(errorsOf(loadFixture({ 'pkg/BUILD': 'package(default_testonly = 2)\n' }).pkg)).toEqual([
      'pkg/BUILD:1:8: package: for parameter default_testonly: want bool',
    ]);
  });
});
