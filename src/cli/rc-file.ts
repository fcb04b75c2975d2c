import { join } from 'node:path';
import { nodeCrypto, UsageError } from '../core/index.js';
import { findWorkspaceRoot } from '../loading/index.js';
import type { CliIO } from './io.js';
import { expandRcOptions, type SupportsOption } from './rc-expansion.js';
import { canonical, readRcFile, readText, type RcOption } from './rc-file-reader.js';
import {
  isStartupOptionWord,
  resolveStartupOptions,
  startupAnnouncements,
  startupFlag,
  startupFlagsFromRc,
  type StartupFlag,
  type StartupOptions,
} from './startup-options.js';

/** Bazel's system rc file on Unix (BAZEL_SYSTEM_BAZELRC_PATH); `KILN_SYSTEM_BAZELRC` names another (tests: a temp file, or empty for none). */
export const SYSTEM_BAZELRC = '/etc/bazel.bazelrc';

/** What rc handling reads from a command's IO. */
export type RcIO = Pick<CliIO, 'env' | 'cwd' | 'stderr'>;

export interface RcSettings {
  /** Replaces the command's own option parsers (tests). */
  readonly supportsOption?: SupportsOption;
  /** `linux`, `macos`, ... (default: this host's, as Bazel names it). */
  readonly platform?: string;
}

/** The commands whose options come from the build option parser (Bazel: they inherit `build`). */
const BUILD_LIKE = ['build', 'test', 'run', 'coverage', 'cquery', 'aquery', 'info', 'clean', 'fetch', 'print_action', 'mobile-install'];
/** Kiln's commands that take Bazel options (a `common` option none of them knows is an error). */
const OPTION_COMMANDS = ['build', 'test', 'run', 'info', 'clean', 'query', 'cquery', 'aquery'];

/**
 * Applies the rc files to one command's arguments, as Bazel does: the startup options main.ts
 * handed on (`--bazelrc`, `--nohome_rc`, ...) choose the files, which are read in Bazel's order —
 * the system rc, `%workspace%/.bazelrc`, `$HOME/.bazelrc`, `$BAZELRC`, each `--bazelrc` — then Kiln's
 * own `%workspace%/.kilnrc` and `$HOME/.kilnrc`; their lines for the command and the commands it
 * inherits come before the command line, and every `--config` is expanded in place
 * (rc-expansion.ts). With `--announce_rc` each file's options and each config's definition are
 * printed to stderr as Bazel's `INFO:` lines.
 * @throws UsageError naming the file and line at fault
 */
export async function applyRcFiles(command: string, args: readonly string[], workspaceRoot: string, io: RcIO, settings: RcSettings = {}): Promise<string[]> {
  const commandLine: StartupFlag[] = [];
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      for (const r of args.slice(i)) rest.push(r);
      break;
    }
    if (isStartupOptionWord(a)) commandLine.push(startupFlag(a, undefined, undefined));
    else rest.push(a);
  }
  const { startup, rcOptions } = readStartupAndRcFiles(commandLine, workspaceRoot, io, settings.platform ?? hostPlatformName());
  const supportsOption = settings.supportsOption ?? (await optionSupport(command, rcOptions));
  const expansion = expandRcOptions(command, rcOptions, rest, {
    supportsOption,
    allCommands: OPTION_COMMANDS,
    platform: settings.platform ?? hostPlatformName(),
  });
  for (const warning of expansion.warnings) io.stderr.write(`WARNING: ${warning}\n`);
  if (expansion.announce) {
    for (const line of [...startupAnnouncements(startup.flags), ...expansion.notes]) io.stderr.write(`INFO: ${line}\n`);
  }
  return expansion.args;
}

/**
 * The startup options in effect (rc files' `startup` and `startup:<platform>` lines, then the
 * command line's) and every rc file's options, read once. main.ts calls it before the command
 * runs, for the output base; `applyRcFiles` for the command's options.
 * @throws UsageError
 */
export function readStartupAndRcFiles(
  commandLine: readonly StartupFlag[],
  workspaceRoot: string | undefined,
  io: Pick<CliIO, 'env' | 'cwd'>,
  platform: string = hostPlatformName(),
): { startup: StartupOptions; rcOptions: RcOption[] } {
  // Only the command line chooses rc files (rc files may not: Can't specify ... in the .bazelrc file).
  const selection = resolveStartupOptions(commandLine, io.cwd);
  const rcOptions: RcOption[] = [];
  for (const path of rcFilePaths(selection, workspaceRoot, io.env))
    for (const o of readRcFile(path, { workspaceRoot, cwd: io.cwd, env: io.env })) rcOptions.push(o);
  const startupLines = [...rcOptions.filter((o) => o.command === 'startup'), ...rcOptions.filter((o) => o.command === `startup:${platform}`)];
  const startup = resolveStartupOptions([...startupFlagsFromRc(startupLines), ...commandLine], io.cwd);
  return { startup, rcOptions };
}

/**
 * The rc files to read, in order, each once (by real path; a missing optional one left out):
 * Bazel's family, then Kiln's `.kilnrc` files for Kiln-only settings, which the same
 * `--noworkspace_rc` / `--nohome_rc` switch off.
 * @throws UsageError for a `$BAZELRC` or `--bazelrc` file that cannot be read (Bazel's words)
 */
export function rcFilePaths(startup: StartupOptions, workspaceRoot: string | undefined, env: Readonly<Record<string, string | undefined>>): string[] {
  if (startup.ignoreAllRcFiles) return [];
  const paths: string[] = [];
  const candidates: { path: string; required: boolean }[] = [];
  const systemRc = env.KILN_SYSTEM_BAZELRC ?? SYSTEM_BAZELRC;
  if (startup.systemRc && systemRc !== '') candidates.push({ path: systemRc, required: false });
  if (startup.workspaceRc && workspaceRoot !== undefined) candidates.push({ path: join(workspaceRoot, '.bazelrc'), required: false });
  if (startup.homeRc && env.HOME) candidates.push({ path: join(env.HOME, '.bazelrc'), required: false });
  for (const path of (env.BAZELRC ?? '').split(',').filter((p) => p !== '')) candidates.push({ path, required: true });
  for (const path of startup.bazelrcs) candidates.push({ path, required: true });
  if (startup.workspaceRc && workspaceRoot !== undefined) candidates.push({ path: join(workspaceRoot, '.kilnrc'), required: false });
  if (startup.homeRc && env.HOME) candidates.push({ path: join(env.HOME, '.kilnrc'), required: false });
  const seen = new Set<string>();
  for (const { path, required } of candidates) {
    if (readText(path) === undefined) {
      if (required) throw new UsageError(`Error: Unable to read .bazelrc file '${path}'.`);
      continue;
    }
    const real = canonical(path);
    if (seen.has(real)) continue;
    seen.add(real);
    paths.push(path);
  }
  return paths;
}

/**
 * Reads the startup options before the command runs (main.ts): rc files chosen by the command
 * line's startup options, their `startup` lines, and the output base those give —
 * `--output_base`, else `<--output_user_root>/<md5 of the workspace path>` as Bazel lays output
 * bases out — for the command to take as `--output_base`. Undefined output base: Kiln's default.
 * @throws UsageError
 */
export function startupForCommand(
  commandLine: readonly StartupFlag[],
  io: Pick<CliIO, 'env' | 'cwd'>,
): { startup: StartupOptions; outputBase: string | undefined } {
  const workspaceRoot = findWorkspaceRoot(io.cwd);
  const { startup } = readStartupAndRcFiles(commandLine, workspaceRoot, io);
  let outputBase = startup.outputBase;
  if (outputBase === undefined && startup.outputUserRoot !== undefined && workspaceRoot !== undefined) {
    outputBase = join(startup.outputUserRoot, nodeCrypto().createHash('md5').update(workspaceRoot).digest('hex'));
  }
  return { startup, outputBase };
}

/** Bazel's name for this host's platform config (ConfigExpander.getPlatformName). */
export function hostPlatformName(platform: NodeJS.Platform = process.platform): string {
  const names: Partial<Record<NodeJS.Platform, string>> = { linux: 'linux', darwin: 'macos', win32: 'windows', freebsd: 'freebsd', openbsd: 'openbsd' };
  return names[platform] ?? platform;
}

/**
 * The command's own option parser as the `supportsOption` predicate, loaded when needed: `query`
 * must not load analysis (node:crypto and more) unless a `common` line holds an option query does
 * not know, which then has to be known to some other command.
 */
async function optionSupport(command: string, rcOptions: readonly RcOption[]): Promise<SupportsOption> {
  const query = command === 'query' ? (await import('./query-option-support.js')).supportsQueryOption : undefined;
  const commonWords = rcOptions.filter((o) => o.command === 'common' || o.command.startsWith('common:')).map((o) => o.option);
  const needsBuild = command !== 'query' || commonWords.some((w) => w.startsWith('-') && !query!(w));
  const build = needsBuild ? (await import('./build-option-support.js')).supportsBuildOption : undefined;
  const queryForOthers = command === 'query' ? query : commonWords.length > 0 ? (await import('./query-option-support.js')).supportsQueryOption : undefined;
  const configured =
    command === 'cquery' || command === 'aquery' ? (await import('./configured-query-option-support.js')).supportsConfiguredQueryOption : undefined;
  return (cmd, word) => {
    if (cmd === 'query') return queryForOthers?.(word) ?? false;
    if (cmd === 'cquery' || cmd === 'aquery') return configured?.(cmd, word) ?? build?.(word) ?? false;
    if (cmd === 'clean' && /^--(no)?(expunge|async)$|^--expunge_async$/.test(word)) return true;
    if (BUILD_LIKE.includes(cmd)) return build?.(word) ?? false;
    return false;
  };
}
