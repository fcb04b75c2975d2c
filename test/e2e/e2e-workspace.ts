import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterEach } from 'vitest';
import { runCli } from '../../src/cli/index.js';

const made: string[] = [];

/** What one in-process run of the CLI printed and returned. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Labels whose actions ran a process in this build (from the plain progress lines). */
  readonly executed: string[];
}

/**
 * A real workspace in a temp dir with its own HOME (so the output base is never the real
 * ~/.cache). `kiln(...)` runs the CLI in-process with captured output, from `cwd` (default: root).
 */
export class E2eWorkspace {
  readonly root: string;
  readonly home: string;

  constructor(
    files: Record<string, string>,
    readonly sharedDir?: string,
  ) {
    const base = mkdtempSync(join(tmpdir(), 'kiln-e2e-'));
    made.push(base);
    this.root = join(base, 'ws');
    this.home = join(base, 'home');
    mkdirSync(this.home, { recursive: true });
    this.write(files);
  }

  write(files: Record<string, string>): void {
    for (const [path, content] of Object.entries(files)) {
      const full = join(this.root, path);
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, content);
    }
  }

  read(path: string): string {
    return readFileSync(join(this.root, path), 'utf8');
  }

  /**
   * Runs `kiln ARGS`. `interruptWhen` plays the user pressing Ctrl-C as soon as stderr satisfies it;
   * `onStdout` sees the whole stdout so far after each write (what a user watching it sees);
   * `env` adds variables to the client's environment (HOME and PATH).
   */
  async kiln(
    args: string[],
    cwd = this.root,
    interruptWhen?: (stderr: string) => boolean,
    onStdout?: (stdout: string) => void,
    env: Record<string, string> = {},
  ): Promise<CliRun> {
    let stdout = '';
    let stderr = '';
    let interrupt = () => {};
    const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
    const text = (c: string | Uint8Array) => {
      const t = typeof c === 'string' ? c : Buffer.from(c).toString('utf8');
      if (interruptWhen?.(stderr + t)) interrupt();
      return t;
    };
    const code = await runCli(
      args,
      {
        stdout: {
          write: (c) => {
            stdout += text(c);
            onStdout?.(stdout);
            return true;
          },
        },
        stderr: { write: (c) => (stderr += text(c)) },
        cwd,
        env: { HOME: this.home, PATH: process.env.PATH, ...env },
        interrupted,
      },
      'e2e',
    );
    const executed = [...stderr.matchAll(/^\[\d+ \/ \d+\] Executing genrule (\S+)$/gm)].map((m) => m[1]!).sort();
    return { code, stdout, stderr, executed };
  }
}

/** A fresh temp dir removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kiln-e2e-'));
  made.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Every file below `dir` (a recorded workspace), by path relative to it, as E2eWorkspace takes them. */
export function filesBelow(dir: string): Record<string, string> {
  return Object.fromEntries([...bytesBelow(dir)].map(([path, bytes]) => [path, bytes.toString('utf8')]));
}

/** Every file below `dir` (following symlinks, such as the convenience symlinks), by relative path, as bytes. */
export function bytesBelow(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else files.set(relative(dir, full), readFileSync(full));
    }
  };
  walk(dir);
  return files;
}

/**
 * A hash of every entry of a workspace's source tree (each path, each file's content, each link's
 * target), leaving out the kiln-* convenience links a build adds: equal before and after a build
 * when nothing outside the output base was written.
 */
export function sourceTreeHash(root: string): string {
  const hash = createHash('sha256');
  const walk = (dir: string, prefix: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (prefix === '' && e.name.startsWith('kiln-')) continue;
      const path = `${prefix}${e.name}`;
      if (e.isSymbolicLink()) hash.update(`${path} -> ${readlinkSync(join(dir, e.name))}\n`);
      else if (e.isDirectory()) walk(join(dir, e.name), `${path}/`);
      else
        hash.update(
          `${path} ${createHash('sha256')
            .update(readFileSync(join(dir, e.name)))
            .digest('hex')}\n`,
        );
    }
  };
  walk(root, '');
  return hash.digest('hex');
}
