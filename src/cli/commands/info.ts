import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { parseBuildOptions } from '../../analysis/index.js';
import { ExitCode, isKilnError, UsageError } from '../../core/index.js';
import { OUTPUT_DIR_NAME } from '../../exec/index.js';
import { targetOutputDirectories } from '../../build/index.js';
import { openWorkspace, printError } from '../workspace-context.js';
import type { CliIO } from '../io.js';
import { applyRcFiles } from '../rc-file.js';

/**
 * `kiln info [build flags] [KEY...]`: where this workspace's outputs live. Without keys every
 * `key: value` line; with keys only their values (one per line when one key, `key: value` when
 * several, as Bazel). Build flags such as `-c opt` change the per-configuration paths.
 */
export async function main(args: string[], io: CliIO): Promise<number> {
  const opened = openWorkspace(io, 'info', args);
  if (typeof opened === 'string') {
    printError(io, opened);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  const { ctx } = opened;
  let parsed;
  try {
    parsed = parseBuildOptions(await applyRcFiles('info', opened.rest, ctx.workspace.root, io));
  } catch (e) {
    if (e instanceof UsageError) {
      printError(io, e.message);
      return ExitCode.COMMAND_LINE_ERROR;
    }
    throw e;
  }
  let dirs;
  try {
    dirs = targetOutputDirectories(ctx, parsed.options);
  } catch (e) {
    if (!isKilnError(e)) throw e;
    printError(io, e.message, e.pos);
    return ExitCode.BUILD_FAILURE;
  }
  const { execRoot, outputBase, workspaceRoot } = ctx.layout;
  const values = infoValues({
    bin: join(execRoot, dirs.bin),
    genfiles: join(execRoot, dirs.genfiles),
    testlogs: join(execRoot, dirs.testlogs),
    execRoot,
    outputBase,
    outputPath: join(execRoot, OUTPUT_DIR_NAME),
    workspaceRoot,
    version: io.version ?? 'unknown',
  });
  const keys = parsed.residue;
  const unknown = keys.filter((k) => !values.has(k));
  if (unknown.length > 0) {
    const missing = unknown.filter((k) => ABSENT_KEYS.has(k));
    printError(io, `unknown key(s): ${unknown.map((k) => `'${k}'`).join(', ')}`);
    for (const k of missing) io.stderr.write(`INFO: '${k}' is Bazel's, and Kiln has no value for it: ${ABSENT_KEYS.get(k)}\n`);
    return ExitCode.COMMAND_LINE_ERROR;
  }
  if (keys.length === 1) io.stdout.write(`${values.get(keys[0]!)!()}\n`);
  else for (const key of keys.length > 0 ? keys : values.keys()) io.stdout.write(`${key}: ${values.get(key)!()}\n`);
  return ExitCode.SUCCESS;
}

/**
 * Bazel's info keys that Kiln has no value for, and why: asked for by name they are unknown keys
 * (Bazel's error and exit code 2), and `kiln info` without keys leaves them out.
 */
export const ABSENT_KEYS: ReadonlyMap<string, string> = new Map([
  ['java-home', 'Kiln runs no Java virtual machine'],
  ['java-runtime', 'Kiln runs no Java virtual machine'],
  ['java-vm', 'Kiln runs no Java virtual machine'],
  ['gc-count', 'Node.js does not count garbage collections for a program to read'],
  ['gc-time', 'Node.js does not time garbage collections for a program to read'],
  ['server_log', 'Kiln runs no server'],
  ['repository_cache', 'Kiln keeps no repository cache'],
]);

interface InfoPaths {
  readonly bin: string;
  readonly genfiles: string;
  readonly testlogs: string;
  readonly execRoot: string;
  readonly outputBase: string;
  readonly outputPath: string;
  readonly workspaceRoot: string;
  readonly version: string;
}

function megabytes(bytes: number): string {
  return `${Math.round(bytes / (1 << 20))}MB`;
}

/** The directory Kiln is installed in (Bazel's install_base): the package holding this code. */
function installBase(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  return dirname(fileURLToPath(import.meta.url));
}

/**
 * Every key `kiln info` knows, in Bazel's order (sorted by name): Bazel's InfoItems with Kiln's
 * values, and the kiln-* names of the convenience directories. The heap sizes are the V8 heap's:
 * used, committed (heapTotal) and the most it may grow to. server_pid is this process: Kiln's
 * client does the server's work.
 */
function infoValues(p: InfoPaths): Map<string, () => string> {
  const entries: [string, () => string][] = [
    ['bazel-bin', () => p.bin],
    ['bazel-genfiles', () => p.genfiles],
    ['bazel-testlogs', () => p.testlogs],
    ['character-encoding', () => 'file.encoding = UTF-8, defaultCharset = UTF-8'],
    ['command_log', () => join(p.outputBase, 'command.log')],
    ['committed-heap-size', () => megabytes(process.memoryUsage().heapTotal)],
    ['execution_root', () => p.execRoot],
    ['install_base', () => installBase()],
    ['kiln-bin', () => p.bin],
    ['kiln-genfiles', () => p.genfiles],
    ['kiln-testlogs', () => p.testlogs],
    ['max-heap-size', () => megabytes(getHeapStatistics().heap_size_limit)],
    ['output_base', () => p.outputBase],
    ['output_path', () => p.outputPath],
    ['package_path', () => '%workspace%'],
    ['release', () => `release ${p.version}`],
    ['server_pid', () => String(process.pid)],
    ['used-heap-size', () => megabytes(process.memoryUsage().heapUsed)],
    ['workspace', () => p.workspaceRoot],
  ];
  return new Map(entries);
}
