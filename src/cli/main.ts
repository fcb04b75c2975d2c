import { ExitCode, isKilnError, UsageError } from '../core/index.js';
import { COMMANDS } from './command-table.js';
import type { CliIO } from './io.js';
import { splitCommandLine, startupOptionsHelp, type SplitCommandLine, type StartupFlag } from './startup-options.js';

const USAGE = `Usage: kiln <command> <options> ...

Available commands:
`;

function helpText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length)) + 2;
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}${c.summary}`);
  return `${USAGE}${lines.join('\n')}\n  ${'help'.padEnd(width)}Prints help for commands ('kiln help startup_options' for the startup options).\n  ${'version'.padEnd(width)}Prints version information.\n`;
}

/**
 * The commands that read a workspace and its rc files: each gets the startup options main.ts read
 * (rc files chosen, the output base) as arguments after its name, which `openWorkspace` and
 * `applyRcFiles` take out again. The other commands (servers, `starlark`) have no workspace: the
 * startup options are accepted and have nothing to change there, except `--output_base`, handed on as before.
 */
const WORKSPACE_COMMANDS = new Set(['build', 'test', 'run', 'info', 'clean', 'query', 'cquery', 'aquery']);

/**
 * Bazel takes startup options before the command (`bazel --output_base=X build`); Kiln has no
 * server to start, so they are read here (with the rc files' `startup` lines) and handed to the
 * command: the output base they give as `--output_base`, the rest as written.
 */
async function commandArguments(name: string, startup: readonly StartupFlag[], rest: readonly string[], io: CliIO): Promise<string[]> {
  if (!WORKSPACE_COMMANDS.has(name)) return [...startup.filter((f) => f.name === 'output_base').map((f) => f.text), ...rest];
  const { startupForCommand } = await import('./rc-file.js');
  const { outputBase } = startupForCommand(startup, io);
  const given = startup.some((f) => f.name === 'output_base');
  const handed = startup.filter((f) => f.name !== 'output_user_root').map((f) => f.text);
  if (!given && outputBase !== undefined) handed.push(`--output_base=${outputBase}`);
  return [...handed, ...rest];
}

/** Runs one Kiln command line and returns its exit code. Never throws. */
export async function runCli(argv: string[], io: CliIO, version: string): Promise<number> {
  let split: SplitCommandLine;
  try {
    split = splitCommandLine(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.stderr.write(`ERROR: ${e.message}\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  const { command: name, rest } = split;
  if (name === 'help' && rest[0] === 'startup_options') {
    io.stdout.write(startupOptionsHelp());
    return ExitCode.SUCCESS;
  }
  if (name === 'help' && rest[0] === 'flags-as-proto') {
    io.stdout.write(await (await import('./flags-as-proto.js')).flagsAsProto());
    return ExitCode.SUCCESS;
  }
  if (name === 'help' && rest[0] === 'version') {
    io.stdout.write(
      "Usage: kiln version [--gnu_format]\n\nPrints version information in Bazel's format (Build label, Build target, Build time, Build timestamp);\n--gnu_format prints `kiln <version>`.\n",
    );
    return ExitCode.SUCCESS;
  }
  if (name === 'help' && rest[0] !== undefined && Object.hasOwn(COMMANDS, rest[0])) {
    const { commandHelp } = await import('./command-help.js');
    const { commandOptionGroups, ownCommandOptions } = await import('./command-option-groups.js');
    const command = rest[0];
    const own = await ownCommandOptions(command);
    io.stdout.write(own ? own.help() : commandHelp(command, COMMANDS[command]!.summary, await commandOptionGroups(command)));
    return ExitCode.SUCCESS;
  }
  if (name === 'help' && rest[0] !== undefined) {
    io.stderr.write(`ERROR: Cannot find the command '${rest[0]}'. Try 'kiln help'.\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io.stdout.write(helpText());
    return name === undefined ? ExitCode.COMMAND_LINE_ERROR : ExitCode.SUCCESS;
  }
  if (name === '--version') {
    io.stdout.write(`kiln ${version}\n`);
    return ExitCode.SUCCESS;
  }
  if (name === 'version') {
    const { versionCommand } = await import('./version-command.js');
    return versionCommand(rest, io, version);
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    io.stderr.write(`ERROR: Command '${name}' not found. Try 'kiln help'.\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  try {
    let args: string[];
    try {
      args = await commandArguments(name, split.startup, rest, io);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      io.stderr.write(`ERROR: ${e.message}\n`);
      return ExitCode.COMMAND_LINE_ERROR;
    }
    const { main } = await entry.load();
    return await main(args, { ...io, version });
  } catch (e) {
    if (isKilnError(e)) {
      io.stderr.write(`ERROR: ${e.format()}\n`);
      return ExitCode.BUILD_FAILURE;
    }
    // A bug in Kiln, not in the user's input: say so, and keep the stack for whoever debugs it.
    const detail = io.env.KILN_DEBUG && e instanceof Error ? `\n${e.stack}` : '';
    io.stderr.write(`FATAL: Kiln crashed (internal error): ${e instanceof Error ? e.message : String(e)}${detail}\n`);
    return ExitCode.INTERNAL_ERROR;
  }
}
