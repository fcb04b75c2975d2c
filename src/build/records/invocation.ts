import { randomUUID } from 'node:crypto';
import { UsageError } from '../../core/index.js';

/** The command line as the build's records report it (Build Event Protocol, profile, Build Event Service). */
export interface RecordedCommandLine {
  /** The command's arguments as the user typed them (after the command name). */
  readonly originalArgs: readonly string[];
  /** Options given on the command line, each in one word (`--name=value`, `-c opt` joined as `-c=opt`). */
  readonly explicitOptions: readonly string[];
  /** Every option that applies, rc files' first, as given. */
  readonly allOptions: readonly string[];
  /** Every option set, in canonical form (`--name=value`, one per value of a repeated option). */
  readonly canonicalOptions: readonly string[];
  readonly startupOptions: readonly string[];
}

/** Who and what this invocation is: what `started` and the records' headers say. */
export interface InvocationFacts {
  /** `--invocation_id`, else a random UUID. */
  readonly invocationId: string;
  /** `--build_request_id`, else a random UUID. */
  readonly buildRequestId: string;
  readonly command: string;
  readonly executable: string;
  readonly toolVersion: string;
  readonly startTimeMs: number;
  readonly workingDirectory: string;
  readonly workspaceDirectory: string;
  readonly patterns: readonly string[];
  readonly commandLine: RecordedCommandLine;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `--invocation_id` / `--build_request_id` as Bazel checks them (a UUID), or a fresh one; throws UsageError. */
export function invocationIdFrom(flag: string, value: string): string {
  if (value === '') return randomUUID();
  if (!UUID.test(value)) throw new UsageError(`While parsing option --${flag}=${value}: Value '${value}' is not a value UUID.`);
  return value.toLowerCase();
}

/**
 * The option words among `args` (the command's arguments), each joined with its value: what is
 * not a target pattern (`residue`) is an option or an option's separate value.
 */
export function optionWords(args: readonly string[], residue: readonly string[]): string[] {
  const patterns = new Map<string, number>();
  for (const r of residue) patterns.set(r, (patterns.get(r) ?? 0) + 1);
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!;
    if (word === '--') break;
    const left = patterns.get(word) ?? 0;
    if (!word.startsWith('-')) {
      if (left > 0) patterns.set(word, left - 1);
      else if (out.length > 0) out[out.length - 1] = `${out[out.length - 1]}=${word}`;
      continue;
    }
    out.push(word);
  }
  return out;
}
