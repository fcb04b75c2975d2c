import { ExitCode, isKilnError } from '../core/index.js';
import { COMMANDS } from './command-table.js';
import type { CliIO } from './io.js';

const USAGE = `Usage: kiln <command> <options> ...

Available commands:
`;

function helpText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length)) + 2;
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}${c.summary}`);
  return `${USAGE}${lines.join('\n')}\n  ${'help'.padEnd(width)}Prints help for commands.\n  ${'version'.padEnd(width)}Prints version information.\n`;
}

/** Startup options Kiln knows, given before the command as in Bazel; the command itself parses them. */
const STARTUP_OPTIONS = ['--output_base'];

/**
 * Bazel takes startup options before the command (`bazel --output_base=X build`); Kiln has no
 * server to start, so each is handed to the command, which also takes it after its name.
 */
function moveStartupOptions(argv: readonly string[]): string[] | { readonly unknown: string } {
  const startup: string[] = [];
  let i = 0;
  for (; i < argv.length && argv[i]!.startsWith('--') && argv[i] !== '--help' && argv[i] !== '--version'; i++) {
    const a = argv[i]!;
    const name = a.split('=', 1)[0]!;
    if (!STARTUP_OPTIONS.includes(name)) return { unknown: a };
    startup.push(a);
    if (!a.includes('=') && i + 1 < argv.length) startup.push(argv[++i]!);
  }
  if (startup.length === 0) return [...argv];
  const [command, ...rest] = argv.slice(i);
  return command === undefined ? [] : [command, ...startup, ...rest];
}

/** Runs one Kiln command line and returns its exit code. Never throws. */
export async function runCli(argv: string[], io: CliIO, version: string): Promise<number> {
  const args = moveStartupOptions(argv);
  if (!Array.isArray(args)) {
    io.stderr.write(`ERROR: Unknown startup option: '${args.unknown}'. Kiln's startup options: ${STARTUP_OPTIONS.join(', ')}.\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  const [name, ...rest] = args;
  if (name === 'help' && rest[0] !== undefined && Object.hasOwn(COMMANDS, rest[0])) {
    const { commandHelp } = await import('./command-help.js');
    io.stdout.write(commandHelp(rest[0], COMMANDS[rest[0]]!.summary));
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
  if (name === 'version' || name === '--version') {
    io.stdout.write(`kiln ${version}\n`);
    return ExitCode.SUCCESS;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    io.stderr.write(`ERROR: Command '${name}' not found. Try 'kiln help'.\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  try {
    const { main } = await entry.load();
    return await main(rest, { ...io, version });
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
