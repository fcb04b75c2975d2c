/**
 * Runs `kiln starlark` in-process through the command's `main(args, io)` and captures what it wrote.
 * The command module is imported lazily so that a missing evaluator fails each test with a clear
 * message instead of silently skipping.
 */
import type { CliIO } from '../../src/cli/io.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

type StarlarkMain = (args: string[], io: CliIO) => Promise<number>;

let loaded: Promise<StarlarkMain> | undefined;

export function loadStarlarkMain(): Promise<StarlarkMain> {
  loaded ??= import('../../src/cli/commands/starlark.js').then(
    (m: { main: StarlarkMain }) => m.main,
    (e: unknown) => {
      throw new Error(
        `cannot load the kiln starlark command (src/cli/commands/starlark.ts exporting main(args, io)): ${e instanceof Error ? e.message : String(e)}`,
      );
    },
  );
  return loaded;
}

export async function runStarlark(args: string[], cwd: string): Promise<CliRun> {
  const main = await loadStarlarkMain();
  let stdout = '';
  let stderr = '';
  const decoder = (chunk: string | Uint8Array) => (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
  const io: CliIO = {
    stdout: { write: (c: string | Uint8Array) => (stdout += decoder(c)) },
    stderr: { write: (c: string | Uint8Array) => (stderr += decoder(c)) },
    cwd,
    env: { PATH: process.env.PATH },
  };
  let code: number;
  try {
    code = await main(args, io);
  } catch (e) {
    // main() must report every failure as an exit code; an exception escaping it is a bug to fix.
    const detail = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    throw new Error(`kiln starlark ${args.join(' ')} threw instead of exiting: ${detail}\nstderr so far:\n${stderr}`);
  }
  return { code, stdout, stderr };
}
