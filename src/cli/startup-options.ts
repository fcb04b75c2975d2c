import { resolve } from 'node:path';
import { UsageError } from '../core/index.js';

/**
 * What a startup option does in Kiln, which has no server: `rc` ones choose the rc files, `layout`
 * ones the output base, `server` ones configure Bazel's server or its JVM and have nothing to act
 * on (accepted; `--announce_rc` says so), `unsupported` ones would change what Kiln does and it
 * cannot honour them (an error rather than a silent difference).
 */
type StartupKind = 'rc' | 'layout' | 'server' | 'unsupported';

interface StartupDefinition {
  readonly kind: StartupKind;
  /** Takes a value (`--name=value` or `--name value`); otherwise `--name` / `--noname`. */
  readonly unary: boolean;
  /** Refused in rc files (Bazel's `Can't specify ... in the .bazelrc file`). */
  readonly commandLineOnly?: boolean;
  readonly help: string;
}

const SERVER_HELP = 'configures the server or its JVM; Kiln runs no server, so it has no effect';

function server(unary: boolean): StartupDefinition {
  return { kind: 'server', unary, help: SERVER_HELP };
}

/** Bazel's startup options (src/main/cpp/startup_options.cc and bazel_startup_options.cc), by name. */
export const STARTUP_OPTIONS: Readonly<Record<string, StartupDefinition>> = {
  output_base: {
    kind: 'layout',
    unary: true,
    help: "the output base (everything Kiln keeps for the workspace); default: ~/.cache/kiln/<md5 of the workspace's path>",
  },
  output_user_root: { kind: 'layout', unary: true, help: "the directory output bases go under: <root>/<md5 of the workspace's path>" },
  bazelrc: { kind: 'rc', unary: true, commandLineOnly: true, help: 'reads this rc file after the default ones (repeatable; /dev/null ignores the later ones)' },
  system_rc: { kind: 'rc', unary: false, commandLineOnly: true, help: 'reads the system rc file, /etc/bazel.bazelrc (default on)' },
  workspace_rc: { kind: 'rc', unary: false, commandLineOnly: true, help: "reads the workspace's .bazelrc and .kilnrc (default on)" },
  home_rc: { kind: 'rc', unary: false, commandLineOnly: true, help: '$HOME/.bazelrc and $HOME/.kilnrc (default on)' },
  ignore_all_rc_files: { kind: 'rc', unary: false, commandLineOnly: true, help: 'reads no rc file at all, --bazelrc ones included' },
  master_bazelrc: { kind: 'rc', unary: false, commandLineOnly: true, help: "Bazel's deprecated name for --system_rc" },
  batch: server(false),
  batch_cpu_scheduling: server(false),
  block_for_lock: server(false),
  client_debug: server(false),
  preemptible: server(false),
  fatal_event_bus_exceptions: server(false),
  host_jvm_debug: server(false),
  autodetect_server_javabase: server(false),
  idle_server_tasks: server(false),
  shutdown_on_low_sys_mem: server(false),
  unlimit_coredumps: server(false),
  watchfs: server(false),
  write_command_log: server(false),
  windows_enable_symlinks: server(false),
  incompatible_windows_style_arg_escaping: server(false),
  command_port: server(true),
  connect_timeout_secs: server(true),
  local_startup_timeout_secs: server(true),
  server_javabase: server(true),
  host_jvm_args: server(true),
  host_jvm_profile: server(true),
  io_nice_level: server(true),
  macos_qos_class: server(true),
  max_idle_secs: server(true),
  server_jvm_out: server(true),
  install_base: server(true),
  expand_configs_in_place: { kind: 'unsupported', unary: false, help: 'Kiln always expands --config in place (the default)' },
  digest_function: { kind: 'unsupported', unary: true, help: 'Kiln hashes with SHA-256 only' },
  unix_digest_hash_attribute_name: { kind: 'unsupported', unary: true, help: 'Kiln reads no file digests from extended attributes' },
  invocation_policy: { kind: 'unsupported', unary: true, help: 'Kiln has no invocation policy' },
  failure_detail_out: { kind: 'unsupported', unary: true, help: 'Kiln writes no failure_detail file' },
};

/** One startup option as written, with where it came from (`undefined`: the command line). */
export interface StartupFlag {
  /** Normalised: `--name=value` for unary options, `--name` / `--noname` otherwise. */
  readonly text: string;
  readonly name: string;
  readonly value: string | boolean;
  readonly source?: string;
  readonly line?: number;
}

/** The startup options in effect, later occurrences winning (rc files first, then the command line). */
export interface StartupOptions {
  readonly flags: readonly StartupFlag[];
  readonly outputBase: string | undefined;
  readonly outputUserRoot: string | undefined;
  /** `--bazelrc` values up to the first `/dev/null`, absolute. */
  readonly bazelrcs: readonly string[];
  readonly systemRc: boolean;
  readonly workspaceRc: boolean;
  readonly homeRc: boolean;
  readonly ignoreAllRcFiles: boolean;
}

/** The names of the startup options a command line holds, split off before the command as Bazel's client does. */
export interface SplitCommandLine {
  readonly startup: readonly StartupFlag[];
  readonly command: string | undefined;
  readonly rest: readonly string[];
}

const HELP_HINT = "  For more info, run 'kiln help startup_options'.";

/**
 * Bazel's SplitCommandLine: every word before the command that starts with `--` is a startup
 * option (`--help` and `--version` aside: Kiln takes them as commands); an unknown one is an error
 * with Bazel's words, a unary one takes `=value` or the next word.
 * @throws UsageError
 */
export function splitCommandLine(argv: readonly string[]): SplitCommandLine {
  const startup: StartupFlag[] = [];
  let i = 0;
  for (; i < argv.length && argv[i]!.startsWith('--') && argv[i] !== '--help' && argv[i] !== '--version'; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const written = eq < 0 ? arg : arg.slice(0, eq);
    const def = STARTUP_OPTIONS[written.slice(2)];
    if (def?.unary && eq < 0) {
      if (i + 1 >= argv.length) {
        throw new UsageError(`Startup option '${arg}' expects a value.\nUsage: '${arg}=somevalue' or '${arg} somevalue'.\n${HELP_HINT}`);
      }
      startup.push(startupFlag(`${arg}=${argv[++i]!}`, undefined, undefined));
    } else startup.push(startupFlag(arg, undefined, undefined));
  }
  const [command, ...rest] = argv.slice(i);
  return { startup, command, rest };
}

/**
 * Reads one startup option (`--name=value`, `--name`, `--noname`) and checks it as Bazel's
 * StartupOptions::ProcessArg does. `source` and `line` name the rc file it came from.
 * @throws UsageError with Bazel's message, prefixed by `file:line:` for an rc file's
 */
export function startupFlag(text: string, source: string | undefined, line: number | undefined): StartupFlag {
  const at = source === undefined ? '' : `${source}:${line}: `;
  const fail = (message: string): never => {
    throw new UsageError(`${at}${message}`);
  };
  const eq = text.indexOf('=');
  const written = eq < 0 ? text : text.slice(0, eq);
  const value = eq < 0 ? undefined : text.slice(eq + 1);
  let name = written.slice(2);
  let def = written.startsWith('--') ? STARTUP_OPTIONS[name] : undefined;
  let enabled = true;
  if (def?.unary === false && value !== undefined) fail(`In argument '${text}': option '${written}' does not take a value.`);
  if (def === undefined && name.startsWith('no') && STARTUP_OPTIONS[name.slice(2)]?.unary === false) {
    name = name.slice(2);
    def = STARTUP_OPTIONS[name]!;
    enabled = false;
    if (value !== undefined) fail(`In argument '${text}': option '${written}' does not take a value.`);
  }
  if (def === undefined || (def.unary && value === undefined)) return fail(`Unknown startup option: '${text}'.\n${HELP_HINT}`);
  if (def.commandLineOnly && source !== undefined) {
    fail(
      name === 'bazelrc' || name === 'ignore_all_rc_files' ? `Can't specify ${written} in the .bazelrc file.` : `Can't specify ${written} in .bazelrc file.`,
    );
  }
  if (def.kind === 'unsupported') fail(`${written}: this startup option is not supported by Kiln (${def.help})`);
  if (name === 'io_nice_level' && !(isInt32(value!) && Number(value) <= 7)) fail(`Invalid argument to --io_nice_level: '${value}'. Must not exceed 7.`);
  if (name === 'max_idle_secs' && !(isInt32(value!) && Number(value) >= 0)) fail(`Invalid argument to --max_idle_secs: '${value}'.`);
  const flag = { text: def.unary ? `--${name}=${value}` : text, name, value: def.unary ? value! : enabled };
  return source === undefined ? flag : { ...flag, source, line: line! };
}

function isInt32(text: string): boolean {
  return /^[+-]?[0-9]+$/.test(text.trim()) && Math.abs(Number(text)) <= 2 ** 31 - 1;
}

/**
 * Reads the words of `startup` rc lines (each with its file and line) the way ProcessArgs does:
 * a unary option without `=` takes the next word.
 */
export function startupFlagsFromRc(words: readonly { readonly option: string; readonly source: string; readonly line: number }[]): StartupFlag[] {
  const flags: StartupFlag[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const def = w.option.startsWith('--') && !w.option.includes('=') ? STARTUP_OPTIONS[w.option.slice(2)] : undefined;
    if (def?.unary && i + 1 < words.length) {
      flags.push(startupFlag(`${w.option}=${words[++i]!.option}`, w.source, w.line));
    } else flags.push(startupFlag(w.option, w.source, w.line));
  }
  return flags;
}

/** The effect of the flags in order (rc files' first, then the command line's), paths made absolute against `cwd`. */
export function resolveStartupOptions(flags: readonly StartupFlag[], cwd: string): StartupOptions {
  let outputBase: string | undefined;
  let outputUserRoot: string | undefined;
  const bazelrcs: string[] = [];
  let stopped = false;
  let systemRc = true;
  let workspaceRc = true;
  let homeRc = true;
  let ignoreAllRcFiles = false;
  for (const f of flags) {
    if (f.name === 'output_base') outputBase = resolve(cwd, f.value as string);
    else if (f.name === 'output_user_root') outputUserRoot = resolve(cwd, f.value as string);
    else if (f.name === 'bazelrc') {
      // `/dev/null` ends the list: later --bazelrc values are ignored (bazel.build/run/bazelrc).
      if (f.value === '/dev/null') stopped = true;
      else if (!stopped) bazelrcs.push(resolve(cwd, f.value as string));
    } else if (f.name === 'system_rc' || f.name === 'master_bazelrc') systemRc = f.value as boolean;
    else if (f.name === 'workspace_rc') workspaceRc = f.value as boolean;
    else if (f.name === 'home_rc') homeRc = f.value as boolean;
    else if (f.name === 'ignore_all_rc_files') ignoreAllRcFiles = f.value as boolean;
  }
  return { flags, outputBase, outputUserRoot, bazelrcs, systemRc, workspaceRc, homeRc, ignoreAllRcFiles };
}

/** True when `word` (after the command) is a startup option main.ts handed on: `--name=value`, `--name`, `--noname`. */
export function isStartupOptionWord(word: string): boolean {
  if (!word.startsWith('--')) return false;
  const eq = word.indexOf('=');
  const name = (eq < 0 ? word : word.slice(0, eq)).slice(2);
  const def = STARTUP_OPTIONS[name] ?? (name.startsWith('no') ? STARTUP_OPTIONS[name.slice(2)] : undefined);
  if (def === undefined || def.kind === 'unsupported') return false;
  return def.unary ? eq >= 0 && STARTUP_OPTIONS[name] !== undefined : eq < 0;
}

/**
 * The `--announce_rc` lines for startup options, as Bazel's server prints them: the rc files'
 * options grouped by file, then one line for each server or JVM option that has nothing to act on.
 */
export function startupAnnouncements(flags: readonly StartupFlag[]): string[] {
  const lines: string[] = [];
  let source: string | undefined;
  let group: string[] = [];
  const flush = () => {
    if (source !== undefined && group.length > 0) lines.push(`Reading 'startup' options from ${source}: ${group.join(', ')}`);
  };
  for (const f of flags) {
    if (f.source === undefined) continue;
    if (f.source !== source) {
      flush();
      source = f.source;
      group = [];
    }
    group.push(f.text);
  }
  flush();
  for (const f of flags) {
    if (STARTUP_OPTIONS[f.name]?.kind === 'server') lines.push(`Startup option ${f.text} has no effect: Kiln runs no server (each command is its own process)`);
  }
  return lines;
}

/** `kiln help startup_options`. */
export function startupOptionsHelp(): string {
  const names = Object.entries(STARTUP_OPTIONS).filter(([, d]) => d.kind !== 'unsupported');
  const lines = names.map(([name, d]) => `  --${d.unary ? `${name}=<value>` : `[no]${name}`}\n      ${d.help}`);
  const refused = Object.entries(STARTUP_OPTIONS)
    .filter(([, d]) => d.kind === 'unsupported')
    .map(([name, d]) => `  --${name}: ${d.help}`);
  return `Startup options, given before the command (kiln [startup options] <command> ...) or on 'startup' lines of rc files:\n\n${lines.join('\n')}\n\nBazel startup options Kiln refuses:\n${refused.join('\n')}\n`;
}
