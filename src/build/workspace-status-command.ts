import { spawnSync } from 'node:child_process';
import { hostname, userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { KilnError } from '../core/index.js';

/** The key/value pairs a workspace status command printed, split as Bazel splits them. */
export interface CustomWorkspaceStatus {
  /** `STABLE_*` keys: a change re-runs the actions that stamp them. */
  readonly stable: ReadonlyMap<string, string>;
  /** Every other key: read by stamping actions, but a change alone re-runs nothing. */
  readonly volatile: ReadonlyMap<string, string>;
}

/** Longest a status command may run: it runs on every build, so a hanging one must not hang the build. */
const TIMEOUT_MS = 60_000;

/**
 * Runs `--workspace_status_command` as Bazel does at the start of a build: the program (a path
 * relative to the workspace root, or a command line for bash) in the workspace root, each stdout
 * line `KEY VALUE` (the first space separates; a line without a value has an empty one).
 * @throws KilnError in Bazel's words when it cannot run or exits non-zero
 */
export function runWorkspaceStatusCommand(
  command: string,
  workspaceRoot: string,
  clientEnv: Readonly<Record<string, string | undefined>>,
): CustomWorkspaceStatus {
  const program = isAbsolute(command) || !command.includes('/') ? command : join(workspaceRoot, command);
  const run = spawnSync('/bin/bash', ['-c', program], {
    cwd: workspaceRoot,
    env: clientEnv as NodeJS.ProcessEnv,
    encoding: 'utf8',
    timeout: TIMEOUT_MS,
    maxBuffer: 16 << 20,
  });
  if (run.error) throw new KilnError(`Failed to determine workspace status: ${run.error.message}`);
  if (run.status !== 0) {
    const why = run.status === null ? `killed by ${run.signal}` : `Process exited with status ${run.status}`;
    throw new KilnError(`Failed to determine workspace status: ${why}${run.stderr ? `\n${run.stderr.trimEnd()}` : ''}`);
  }
  const stable = new Map<string, string>();
  const volatile = new Map<string, string>();
  for (const line of run.stdout.split('\n')) {
    if (line.trim() === '') continue;
    const space = line.indexOf(' ');
    const key = space < 0 ? line : line.slice(0, space);
    const value = space < 0 ? '' : line.slice(space + 1);
    (key.startsWith('STABLE_') ? stable : volatile).set(key, value);
  }
  return { stable, volatile };
}

/**
 * The workspace status a build stamps with: Bazel's own keys (BUILD_EMBED_LABEL, BUILD_HOST,
 * BUILD_USER stable; BUILD_TIMESTAMP volatile), then what `--workspace_status_command` printed.
 */
export function workspaceStatusValues(
  clientEnv: Readonly<Record<string, string | undefined>>,
  custom?: CustomWorkspaceStatus,
): { stable: Map<string, string>; volatile: Map<string, string> } {
  return {
    stable: new Map([['BUILD_EMBED_LABEL', ''], ['BUILD_HOST', hostname()], ['BUILD_USER', clientEnv.USER ?? userInfo().username], ...(custom?.stable ?? [])]),
    volatile: new Map([['BUILD_TIMESTAMP', String(Math.floor(Date.now() / 1000))], ...(custom?.volatile ?? [])]),
  };
}
