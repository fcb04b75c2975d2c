import { type OptionDefinition, OptionRegistry } from '../../core/options/index.js';
import { TEST_OPTION_DEFINITIONS } from './test-option-definitions.js';

const COMPILATION_MODES = { values: ['fastbuild', 'dbg', 'opt'], describe: 'compilation mode' } as const;

function repeatable(name: string, help: string, converter: 'whole' | 'comma' = 'whole'): OptionDefinition {
  return { name, type: 'list', default: [], allowMultiple: true, converter, help };
}

function str(name: string, def: string, help: string): OptionDefinition {
  return { name, type: 'string', default: def, help };
}

function bool(name: string, def: boolean, help: string, abbrev?: string): OptionDefinition {
  return abbrev === undefined ? { name, type: 'bool', default: def, help } : { name, type: 'bool', default: def, help, abbrev };
}

/** Marks an option Kiln accepts but does not implement (see OptionDefinition.notImplemented). */
function notImplemented(def: OptionDefinition, severity: 'error' | 'warning', reason: string): OptionDefinition {
  return { ...def, notImplemented: { severity, reason } };
}

const NO_EFFECT = 'it has no effect in Kiln yet';

function executionOnly(defs: readonly OptionDefinition[]): OptionDefinition[] {
  return defs.map((def) => ({ ...def, executionOnly: true }));
}

/** The options of `kiln build` (and of the commands that build: test, run, aquery, cquery). */
export const BUILD_OPTION_DEFINITIONS: readonly OptionDefinition[] = [
  // Configuration.
  {
    name: 'compilation_mode',
    abbrev: 'c',
    type: 'string',
    default: 'fastbuild',
    allowed: COMPILATION_MODES,
    help: 'Build mode: fastbuild, dbg or opt.',
  },
  {
    name: 'host_compilation_mode',
    type: 'string',
    default: 'opt',
    allowed: COMPILATION_MODES,
    help: 'Build mode of the exec configuration.',
  },
  str('cpu', '', 'The target CPU; empty means the detected host CPU.'),
  str('host_cpu', '', 'The exec CPU; empty means the detected host CPU.'),
  { name: 'define', type: 'list', default: [], allowMultiple: true, converter: 'assignment', help: 'NAME=VALUE build variable; a later NAME wins.' },
  repeatable('copt', 'Option passed to C and C++ compilations.'),
  repeatable('cxxopt', 'Option passed to C++ compilations.'),
  repeatable('conlyopt', 'Option passed to C compilations.'),
  repeatable('linkopt', 'Option passed to links.'),
  repeatable('host_copt', 'copt of the exec configuration.'),
  repeatable('host_cxxopt', 'cxxopt of the exec configuration.'),
  repeatable('host_conlyopt', 'conlyopt of the exec configuration.'),
  repeatable('host_linkopt', 'linkopt of the exec configuration.'),
  repeatable('features', 'Feature enabled (or disabled with a leading -) for every target.'),
  repeatable('ios_multi_cpus', 'Comma-separated architectures for ios_application.', 'comma'),
  { name: 'platforms', type: 'list', default: [], allowMultiple: false, converter: 'comma', help: 'Labels of the target platforms.' },
  str('host_platform', '', 'Label of the host (exec) platform; empty means the detected host platform.'),
  repeatable('extra_execution_platforms', 'Execution platforms considered before those registered in the WORKSPACE and the host platform.', 'comma'),
  repeatable('extra_toolchains', 'Toolchains considered before those registered in the WORKSPACE.', 'comma'),
  str(
    'toolchain_resolution_debug',
    '-.*',
    'Print toolchain resolution for toolchain types and targets matching these comma-separated regular expressions (a leading - excludes).',
  ),
  bool('stamp', false, 'Stamp binaries with the date, user name, host name and workspace status.'),
  {
    name: 'strip',
    type: 'string',
    default: 'sometimes',
    allowed: { values: ['always', 'sometimes', 'never'], describe: 'strip option' },
    help: 'Whether to strip binaries and shared libraries.',
  },
  bool('incompatible_merge_genfiles_directory', true, 'genfiles is the same directory as bin.'),
  str('minimum_os_version', '', 'The minimum OS version which your compilation targets (ctx.fragments.cpp.minimum_os_version()).'),
  // Present-day Bazel's default (false since Bazel 8); Bazel 4.2.3's was true.
  bool('legacy_external_runfiles', false, "Runfiles of other repositories are also under '<workspace>/external/<repository>' in runfiles trees."),
  str('host_javabase', '', 'Label of the Java runtime of the exec configuration ($(JAVA), $(JAVABASE)).'),
  str('javabase', '', 'Label of the Java runtime of the target configuration.'),
  repeatable('output_groups', 'Output groups to build besides the default one.', 'comma'),
  repeatable('aspects', 'Aspects to apply to the top-level targets, each `<label of a .bzl file>%<exported name>`.', 'comma'),
  str('run_under', '', "A command (with its options) that test and run executables run under: 'valgrind --quiet' runs 'valgrind --quiet <program> <args>'."),
  bool('check_visibility', true, 'Report visibility errors (otherwise they are warnings).'),
  bool(
    'allow_analysis_failures',
    false,
    'A target whose analysis fails provides AnalysisFailureInfo to its dependents instead of failing the build (for analysis tests).',
  ),
  // Bazel's internal option (CoreOptions.evaluatingForAnalysisTest), set by analysis_test_transition only: its name
  // has blanks, so no command line sets it, and it keeps an analysis test's configuration apart from every other.
  {
    ...bool('evaluating for analysis test', false, 'Set by analysis_test_transition: the configuration is that of an analysis test dependency.'),
    internal: true,
  },
  bool('build_tests_only', false, 'Build only the tests among the requested targets.'),
  {
    name: 'build_tag_filters',
    type: 'list',
    default: [],
    allowMultiple: false,
    converter: 'comma',
    help: 'Only requested targets with a positive tag and none of the -tags are built (tests that kiln test runs always are).',
  },
  notImplemented(bool('build_runfile_links', true, 'Create runfiles symlink trees.'), 'warning', NO_EFFECT),
  // Execution: read by execution only.
  ...executionOnly([
    // Bazel's rules: at least 1, at most 5000; `auto` (stored as 0) means one per host CPU.
    {
      name: 'jobs',
      abbrev: 'j',
      type: 'int',
      default: 0,
      keywords: { auto: 0 },
      min: 1,
      max: 5000,
      hostResources: true,
      help: 'Concurrent jobs: an integer from 1 to 5000, or auto (one per host CPU), HOST_CPUS or HOST_RAM optionally followed by [-|*]<float>.',
    },
    str('target_pattern_file', '', 'Read the target patterns from this file, one per line (# starts a comment), instead of the command line.'),
    bool('keep_going', false, 'Continue after an error as far as possible.', 'k'),
    str('spawn_strategy', '', 'Default strategy of actions: local, standalone, sandboxed, remote, worker.'),
    repeatable('strategy', 'Mnemonic=strategy for one kind of action (or a bare strategy for all).'),
    str('genrule_strategy', '', 'Strategy of genrules (deprecated by --strategy=Genrule=...).'),
    repeatable(
      'dynamic_local_strategy',
      '[Mnemonic=]local_strategy[,local_strategy...]: the local branch of dynamic execution (first applicable wins; default sandboxed).',
    ),
    repeatable('dynamic_remote_strategy', '[Mnemonic=]remote_strategy[,remote_strategy...]: the remote branch of dynamic execution (default remote).'),
    str('disk_cache', '', 'Directory of the disk cache; empty disables it.'),
    str('remote_cache', '', 'URI of a remote cache: grpc://host:port, grpcs://host:port (or host:port) or unix:///path.'),
    str('remote_executor', '', 'URI of a remote execution endpoint (same forms as --remote_cache); it also serves as the cache.'),
    str('remote_instance_name', '', 'Instance name sent to the remote endpoints.'),
    repeatable('remote_header', 'NAME=VALUE header sent with every remote call.'),
    repeatable('remote_cache_header', 'NAME=VALUE header sent with every remote cache call.'),
    repeatable('remote_exec_header', 'NAME=VALUE header sent with every remote execution call.'),
    {
      name: 'remote_timeout',
      type: 'duration',
      default: 60_000,
      help: 'Longest wait for a remote call (for a stream: between two messages); d, h, m, s or ms, seconds when the unit is omitted; 0: no limit.',
    },
    { name: 'remote_retries', type: 'int', default: 5, help: 'Retries of a remote call that failed with a transient error.' },
    {
      name: 'remote_retry_max_delay',
      type: 'duration',
      default: 5000,
      help: 'Longest wait between two attempts of a remote call (also caps the delay a server asks for); d, h, m, s or ms, seconds when the unit is omitted.',
    },
    bool('remote_accept_cached', true, 'Accept results from the remote cache (and let the executor answer from its cache).'),
    bool('remote_upload_local_results', true, 'Upload the results of actions run locally to the remote cache.'),
    bool('remote_local_fallback', false, 'Run an action locally when remote execution fails.'),
    {
      name: 'remote_download_outputs',
      type: 'string',
      default: 'all',
      allowed: { values: ['all', 'toplevel', 'minimal'], describe: 'remote download mode' },
      help: 'Which outputs of remote actions are downloaded: all, those of the requested targets (toplevel), or only what local actions need (minimal).',
    },
    bool('remote_cache_compression', false, 'Send and fetch blobs zstd-compressed where the remote server supports it.'),
    bool('remote_download_toplevel', false, 'The same as --remote_download_outputs=toplevel.'),
    bool('remote_download_minimal', false, 'The same as --remote_download_outputs=minimal.'),
    repeatable('remote_default_exec_properties', 'NAME=VALUE platform property of every remotely executed action.'),
    repeatable('credential_helper', '[SCOPE=]PATH: a credential helper for the remote endpoints (SCOPE a host or *.domain; none: every host).'),
    str('credential_helper_cache_duration', '30m', "How long a helper's credentials are kept when it gives no expiry."),
    str('credential_helper_timeout', '10s', 'How long a credential helper may take to answer.'),
    str('tls_certificate', '', 'PEM file of the certificate authority that signed the remote server (grpcs://).'),
    str('tls_client_certificate', '', 'PEM file of the client certificate (with --tls_client_key).'),
    str('tls_client_key', '', 'PEM file of the client key (with --tls_client_certificate).'),
    bool('verbose_failures', false, 'Print the full command line of failing actions.'),
    str('show_progress_rate_limit', '-1', 'Least number of seconds between two progress messages (a decimal); -1 or 0: the default pace.'),
    str(
      'output_filter',
      '',
      "Only show the output of actions (INFO: From ...) of targets whose label this regular expression matches (anywhere: '^//pkg' for a package).",
    ),
    repeatable('action_env', "NAME=VALUE, or NAME to take the client's value, in the environment of every action (and its key)."),
    repeatable(
      'host_action_env',
      "NAME=VALUE, or NAME to take the client's value, in the environment of every action of the exec configuration (tools), instead of --action_env.",
    ),
    bool('incompatible_strict_action_env', false, "Actions get a fixed PATH (/bin:/usr/bin:/usr/local/bin), not the client's."),
    str(
      'workspace_status_command',
      '',
      'A program run at the start of each build whose KEY VALUE lines stamp builds (STABLE_* keys stable, the rest volatile).',
    ),
    bool('incompatible_skip_genfiles_symlink', true, "Make no <prefix>genfiles convenience symlink (present-day Bazel's default)."),
    str('symlink_prefix', 'kiln-', "Prefix of the convenience symlinks (kiln-bin...): 'bazel-' gives Bazel's names, '/' none."),
    { name: 'show_result', type: 'int', default: 1, min: 0, help: 'Print the outputs of each target when at most this many targets were requested.' },
    {
      name: 'curses',
      type: 'string',
      default: 'auto',
      allowed: { values: ['yes', 'no', 'auto'], describe: 'curses option' },
      help: 'Live progress that rewrites itself (yes, no, or auto: on a terminal).',
    },
    {
      name: 'color',
      type: 'string',
      default: 'auto',
      allowed: { values: ['yes', 'no', 'auto'], describe: 'color option' },
      help: 'Colored output (Kiln prints none: accepted for rc files).',
    },
    bool('subcommands', false, 'Print the full command line of each action before running it.', 's'),
    bool('build', true, 'Run actions (--nobuild stops after analysis).'),
    notImplemented(
      bool('sandbox_debug', false, 'Keep sandbox directories after the action ends.'),
      'warning',
      "Kiln's sandbox builds each action's execroot in its own memory, so there is no sandbox directory to keep; a failure's message already names the command (see --verbose_failures)",
    ),
    bool('sandbox_fallback', true, "Kiln: run unsandboxed when the host has no sandbox (Bazel's legacy local fallback)."),
    repeatable('sandbox_writable_path', 'An existing host directory (absolute path) writable inside every sandboxed action.'),
    repeatable('sandbox_tmpfs_path', 'An absolute path mounted as an empty, writable tmpfs inside every sandboxed action.'),
    // The build's own records (src/build/records): Build Event Protocol files, the JSON trace profile, the execution log.
    str('build_event_json_file', '', 'Write the Build Event Protocol stream to this file, one JSON object (proto3 JSON) per line.'),
    str('build_event_binary_file', '', 'Write the Build Event Protocol stream to this file as varint-delimited BuildEvent messages.'),
    str('build_event_text_file', '', 'Write the Build Event Protocol stream to this file in protobuf text format.'),
    bool('build_event_publish_all_actions', false, 'Publish every executed action in the Build Event Protocol, not only failed ones.'),
    str('invocation_id', '', 'The UUID of this invocation (Build Event Protocol, profile); a random one when empty.'),
    str('build_request_id', '', 'An id for the build request, sent to the Build Event Service; a random one when empty.'),
    str('bes_backend', '', 'A Build Event Service (grpc://host:port, grpcs://host:port) the Build Event Protocol stream is published to.'),
    str('bes_results_url', '', "Where users see the invocation: 'Streaming build results to: <url>/<invocation id>' is printed."),
    {
      name: 'bes_timeout',
      type: 'duration',
      default: 0,
      help: 'Longest wait for the Build Event Service upload; d, h, m, s or ms, seconds when the unit is omitted; 0: no limit.',
    },
    repeatable('bes_header', 'NAME=VALUE header sent with every call to the Build Event Service.'),
    {
      name: 'experimental_build_event_upload_max_retries',
      type: 'int',
      default: 4,
      min: 0,
      help: 'How often the Build Event Service upload is tried again after a transient failure (the unacknowledged events are sent again).',
    },
    {
      name: 'experimental_build_event_upload_retry_minimum_delay',
      type: 'duration',
      default: 1000,
      help: 'The wait before the first retry of the Build Event Service upload, doubled for each later one; d, h, m, s or ms.',
    },
    str('bes_instance_name', '', 'The instance (project_id) the Build Event Service files the invocation under.'),
    bool(
      'bes_lifecycle_events',
      true,
      'Publish the build and invocation lifecycle events (BuildEnqueued, InvocationAttemptStarted, ...) to the Build Event Service.',
    ),
    str('profile', '', 'Write the JSON trace profile (Chrome trace event format) to this file; gzipped when the name ends with .gz.'),
    bool('generate_json_trace_profile', true, 'Write a JSON trace profile to <output base>/command.profile.gz when --profile is not given.'),
    str('execution_log_json_file', '', 'Write every executed spawn as a SpawnExec message (spawn.proto), one JSON object per line.'),
    str('execution_log_binary_file', '', 'Write every executed spawn as varint-delimited SpawnExec messages (spawn.proto).'),
    str(
      'execution_log_compact_file',
      '',
      'Write the execution log in the compact format: zstd-compressed, varint-delimited ExecLogEntry messages (spawn.proto).',
    ),
    bool('execution_log_sort', true, 'Sort the JSON and binary execution logs so that two builds of the same actions compare line by line.'),
  ]),
  ...TEST_OPTION_DEFINITIONS,
];

/**
 * Every build option Kiln knows. Names, defaults and repeatability follow Bazel's command-line
 * reference (bazel.build/reference/command-line-reference) for the options Bazel has;
 * `sandbox_fallback` is Kiln's own.
 */
export const BUILD_OPTIONS = new OptionRegistry(BUILD_OPTION_DEFINITIONS);
