import type { OptionDefinition } from './option-definition.js';
import { TEST_OPTION_DEFINITIONS } from './test-option-definitions.js';

/**
 * Every build option Kiln knows, by full name and by one-letter abbreviation. Names, defaults
 * and repeatability follow Bazel's command-line reference (bazel.build/reference/command-line-reference)
 * for the options Bazel has; `sandbox_fallback` is Kiln's own.
 */
export class BuildOptionRegistry {
  private readonly byName = new Map<string, OptionDefinition>();
  private readonly byAbbrev = new Map<string, OptionDefinition>();

  constructor(definitions: readonly OptionDefinition[]) {
    for (const def of definitions) {
      if (this.byName.has(def.name)) throw new Error(`option --${def.name} is registered twice`);
      this.byName.set(def.name, def);
      if (def.abbrev !== undefined) {
        if (this.byAbbrev.has(def.abbrev)) throw new Error(`abbreviation -${def.abbrev} is registered twice`);
        this.byAbbrev.set(def.abbrev, def);
      }
    }
  }

  get(name: string): OptionDefinition | undefined {
    return this.byName.get(name);
  }

  byAbbreviation(letter: string): OptionDefinition | undefined {
    return this.byAbbrev.get(letter);
  }

  names(): IterableIterator<string> {
    return this.byName.keys();
  }

  definitions(): IterableIterator<OptionDefinition> {
    return this.byName.values();
  }
}

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
  str('run_under', '', "A command (with its options) that test and run executables run under: 'valgrind --quiet' runs 'valgrind --quiet <program> <args>'."),
  bool('check_visibility', true, 'Report visibility errors (otherwise they are warnings).'),
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
    repeatable('action_env', "NAME=VALUE, or NAME to take the client's value, in the environment of every action (and its key)."),
    notImplemented(repeatable('host_action_env', 'NAME=VALUE (or NAME) for actions of the exec configuration.'), 'warning', NO_EFFECT),
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
    notImplemented(bool('sandbox_debug', false, 'Keep sandbox directories after the action ends.'), 'warning', NO_EFFECT),
    bool('sandbox_fallback', true, "Kiln: run unsandboxed when the host has no sandbox (Bazel's legacy local fallback)."),
    repeatable('sandbox_writable_path', 'An existing host directory (absolute path) writable inside every sandboxed action.'),
    repeatable('sandbox_tmpfs_path', 'An absolute path mounted as an empty, writable tmpfs inside every sandboxed action.'),
  ]),
  ...TEST_OPTION_DEFINITIONS,
];

export const BUILD_OPTIONS = new BuildOptionRegistry(BUILD_OPTION_DEFINITIONS);
