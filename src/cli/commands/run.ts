import { spawn } from 'node:child_process';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ExitCode, shellQuote } from '../../core/index.js';
import { runBuildCommand } from '../build-command.js';
import { displayPath } from '../build-printer.js';
import { printError } from '../workspace-context.js';
import type { CliIO } from '../io.js';

/**
 * The variables runfiles libraries read to find a program's runfiles. Bazel's `run` clears them from
 * the client's environment (present-day RunCommand; 2.1.0 and 4.2.3 neither set nor cleared them),
 * so that a program finds its own tree beside `$0` rather than one an outer program was given.
 */
const RUNFILES_VARIABLES = ['JAVA_RUNFILES', 'RUNFILES_DIR', 'RUNFILES_MANIFEST_FILE', 'RUNFILES_MANIFEST_ONLY', 'TEST_SRCDIR'];

/**
 * `kiln run [flags] //target [-- args]`: builds one target and its runfiles tree, then runs its
 * executable output with the arguments after `--`, and exits with the program's exit code.
 *
 * As in Bazel, the program starts in `<program>.runfiles/<workspace name>` (where its data files are
 * at their workspace paths), with BUILD_WORKSPACE_DIRECTORY and BUILD_WORKING_DIRECTORY set; a
 * program without a runfiles tree (a source file) starts in the working directory.
 */
export async function main(args: string[], io: CliIO): Promise<number> {
  const dashes = args.indexOf('--');
  const buildArgs = dashes < 0 ? args : args.slice(0, dashes);
  const programArgs = dashes < 0 ? [] : args.slice(dashes + 1);
  // As in Bazel, the first word that is not a flag is the target; later words go to the program.
  const built = await runBuildCommand(buildArgs, io, 'run');
  if (built.exitCode !== ExitCode.SUCCESS) return built.exitCode;
  const target = built.targets[0]!;
  const ctx = built.ctx!;
  const executable = target.executable ?? (target.files.length === 1 ? target.files[0]! : undefined);
  const path = executable ? join(ctx.layout.execRoot, executable) : '';
  if (!executable || !(await isExecutableFile(path))) {
    printError(io, `Cannot run target ${target.label}: Not executable`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  // The rule's args come first, as in Bazel; its env over the client's.
  const commandLine = [...(target.runEnvironment?.args ?? []), ...programArgs];
  let cwd = io.cwd;
  if (target.runfilesDir !== undefined) {
    // The tree holds `<workspace>/` only when the program has main-repository runfiles; Bazel makes it always.
    cwd = join(ctx.layout.execRoot, target.runfilesDir, ctx.workspace.name || '__main__');
    await mkdir(cwd, { recursive: true });
  }
  const env: Record<string, string | undefined> = {
    ...io.env,
    ...Object.fromEntries(target.runEnvironment?.env ?? []),
    BUILD_WORKSPACE_DIRECTORY: ctx.layout.workspaceRoot,
    BUILD_WORKING_DIRECTORY: io.cwd,
  };
  for (const name of RUNFILES_VARIABLES) delete env[name];
  const shown = displayPath(executable, built.outputDirectories!, built.symlinkPrefix);
  if (built.runUnder) {
    // Bazel's RunCommand: `/bin/bash -c '<run_under> <program> <args>'`, the program and its arguments quoted.
    const script = (program: string) => [built.runUnder, ...[program, ...commandLine].map(shellQuote)].join(' ');
    io.stderr.write(`INFO: Running command line: /bin/bash -c ${shellQuote(script(shown))}\n`);
    return runProgram('/bin/bash', ['-c', script(path)], cwd, env, io);
  }
  io.stderr.write(`INFO: Running command line: ${[shown, ...commandLine].join(' ')}\n`);
  return runProgram(path, commandLine, cwd, env, io);
}

/** An output analysis marked executable (executable genrule, sh_binary) has its executable bit set. */
async function isExecutableFile(path: string): Promise<boolean> {
  const st = await stat(path).catch(() => undefined);
  return st?.isFile() === true && (st.mode & 0o111) !== 0;
}

function runProgram(path: string, args: readonly string[], cwd: string, env: Record<string, string | undefined>, io: CliIO): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(path, args, {
      cwd,
      env,
      stdio: ['inherit', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk: Buffer) => io.stdout.write(chunk));
    child.stderr.on('data', (chunk: Buffer) => io.stderr.write(chunk));
    void io.interrupted?.then(() => child.kill('SIGINT'));
    child.on('error', (e) => {
      printError(io, `cannot run ${path}: ${e.message}`);
      resolve(ExitCode.BUILD_FAILURE);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 + (signalNumber(signal) ?? 0) : ExitCode.BUILD_FAILURE)));
  });
}

function signalNumber(signal: NodeJS.Signals): number | undefined {
  return { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 }[signal as string];
}
