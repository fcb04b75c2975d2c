import * as grpc from '@grpc/grpc-js';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { digestOf, ExitCode, reapi } from '../../src/core/index.js';
import { type Behaviour, type HostileMethod, type HostileReapiServer, type Script, startHostileReapiServer } from '../remote/hostile-reapi-server.js';
import { needTool } from '../setup/need-tool.js';
import { E2eWorkspace, sourceTreeHash } from './e2e-workspace.js';

// Every hostile answer and behaviour of issue 28's probe, against the built binary: for each, the
// build fails with a clear error or retries and succeeds, within (retries + 1) x --remote_timeout
// + retries x --remote_retry_max_delay + a margin; the source tree is the same before and after
// (a hash of every entry); and Kiln's peak resident memory (GNU time's %M) stays under a bound.
// The crafted results that are also cache entries are in poisoned-results.test.ts; the client-level
// cases (each RemoteClient call) in test/remote/hostile-server-client.test.ts.

const REPO = join(import.meta.dirname, '../..');
const BINARY = join(REPO, 'bin/kiln');
const GNU_TIME = '/usr/bin/time';
const READY =
  needTool('the built kiln (dist/)', existsSync(join(REPO, 'dist/bundle/kiln.js')), 'npm run build') &&
  needTool('GNU time', existsSync(GNU_TIME), 'scripts/test-setup.d/16-gnu-time.sh');

const TIMEOUT_S = 1;
const RETRIES = 1;
const MAX_DELAY_MS = 300;
const BOUND_MS = (RETRIES + 1) * TIMEOUT_S * 1000 + RETRIES * MAX_DELAY_MS;
/** Node's and Kiln's start, loading and analysis, on a shared 2-core machine. */
const MARGIN_MS = 5000;
/**
 * Kiln's peak RSS for a one-action local build is about 65 MB (GNU time, 3 Dec 2026), and a 6 MiB
 * download adds its chunks; a client that held a claimed blob or expanded a tree bomb would pass
 * this bound by gigabytes.
 */
const PEAK_RSS_BOUND_MB = 400;

const OUT = 'bazel-out/k8-fastbuild/bin/pkg/g.txt';
const TREE = 'bazel-out/k8-fastbuild/bin/pkg/t_d';
const FILES = {
  'MODULE.bazel': '',
  'pkg/BUILD': [
    'load(":defs.bzl", "tree")',
    'genrule(name = "g", outs = ["g.txt"], cmd = "echo hello > $@")',
    // Above the 4 MiB batch limit: uploaded with ByteStream Write.
    'genrule(name = "big", outs = ["big.bin"], cmd = "head -c 6291456 /dev/zero > $@")',
    'tree(name = "t")',
    '',
  ].join('\n'),
  'pkg/defs.bzl': [
    'def _tree(ctx):',
    '    d = ctx.actions.declare_directory(ctx.attr.name + "_d")',
    '    ctx.actions.run_shell(outputs = [d], command = "mkdir -p %s && echo real > %s/a.txt" % (d.path, d.path))',
    '    return [DefaultInfo(files = depset([d]))]',
    'tree = rule(_tree)',
    '',
  ].join('\n'),
  'pkg/source.txt': 'a source file\n',
};

interface Run {
  code: number | null;
  stderr: string;
  ms: number;
  peakRssMb: number;
}

/** `kiln build FLAGS TARGET` with the built binary under GNU time, which reports the peak RSS on its last stderr line. */
function kilnBuild(ws: E2eWorkspace, flags: string[], target: string): Promise<Run> {
  const args = [
    '-f',
    'KILN-PEAK-RSS-KB %M',
    BINARY,
    'build',
    ...flags,
    `--remote_timeout=${TIMEOUT_S}s`,
    `--remote_retries=${RETRIES}`,
    `--remote_retry_max_delay=${MAX_DELAY_MS}ms`,
    target,
  ];
  const started = performance.now();
  const child = spawn(GNU_TIME, args, { cwd: ws.root, env: { HOME: ws.home, PATH: process.env.PATH } });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdout.resume();
  return new Promise((resolve) =>
    child.on('close', (code) => {
      const peak = /KILN-PEAK-RSS-KB (\d+)\n?$/.exec(stderr);
      resolve({
        code,
        stderr: stderr.replace(/KILN-PEAK-RSS-KB \d+\n?$/, ''),
        ms: performance.now() - started,
        peakRssMb: peak ? Number(peak[1]) / 1024 : Number.NaN,
      });
    }),
  );
}

const key = (d: { hash: string; sizeBytes: number | bigint }) => `${d.hash}/${d.sizeBytes}`;

/** Execute answers `result` for whatever action it is asked (the default Execute then serves it). */
function answerExecute(server: HostileReapiServer, result: reapi.ActionResultInit): Script {
  return (_, request) => void server.executeResults.set(key((request as reapi.ExecuteRequest).actionDigest!), result);
}

/** What a correct executor answers for //pkg:g. */
const executesG = (server: HostileReapiServer): reapi.ActionResultInit => ({ exitCode: 0, outputFiles: [{ path: OUT, digest: server.put('hello\n') }] });

/** Execute first behaves as `first` says (by call number), then answers //pkg:g's result. */
function executeThen(server: HostileReapiServer, first: readonly Behaviour[]): Script {
  const result = executesG(server);
  return (call, request) => {
    server.executeResults.set(key((request as reapi.ExecuteRequest).actionDigest!), result);
    return first[call];
  };
}

interface Case {
  readonly name: string;
  readonly flag: '--remote_executor' | '--remote_cache';
  readonly target: '//pkg:g' | '//pkg:t' | '//pkg:big';
  readonly script: (server: HostileReapiServer) => Partial<Record<HostileMethod, Script>>;
  /** SUCCESS (retried, or run locally after a failed cache), or REMOTE_ERROR (34, as Bazel: the remote system failed, not the command). */
  readonly code: number;
  /** What stderr must say (a clear error naming the call or the output). */
  readonly says: RegExp;
  /** Bound on the wall time beyond the margin; BOUND_MS by default. */
  readonly boundMs?: number;
}

const big = Buffer.alloc(6 * 1024 * 1024, 'b');
const stall: Script = () => ({ kind: 'stall' });

const POISONED_RESULTS: readonly Case[] = [
  {
    name: 'an output path that escapes the output base',
    flag: '--remote_executor',
    target: '//pkg:g',
    script: (s) => ({ Execute: answerExecute(s, { exitCode: 0, outputFiles: [{ path: `${OUT}/../../../../../../escape.txt`, digest: s.put('x') }] }) }),
    code: ExitCode.REMOTE_ERROR,
    says: /remote execution on .*: the result names output file '.*escape\.txt', which is not a clean relative path/,
  },
  {
    name: 'one path named as a file and as a directory',
    flag: '--remote_executor',
    target: '//pkg:g',
    script: (s) => {
      const tree = s.put(Buffer.from(reapi.Tree.encode({ root: {} })));
      return {
        Execute: answerExecute(s, { exitCode: 0, outputFiles: [{ path: OUT, digest: s.put('x') }], outputDirectories: [{ path: OUT, treeDigest: tree }] }),
      };
    },
    code: ExitCode.REMOTE_ERROR,
    says: new RegExp(`remote execution on .*: the result names (output directory '${OUT}', which the action declares as a file|'${OUT}' twice)`),
  },
  {
    name: 'a chain of symlinks in a tree that together leave it',
    flag: '--remote_executor',
    target: '//pkg:t',
    script: (s) => {
      const tree = s.put(
        Buffer.from(
          reapi.Tree.encode({
            root: {
              symlinks: [
                { name: 'l1', target: 'l2/../..' },
                { name: 'l2', target: '.' },
              ],
            },
          }),
        ),
      );
      return { Execute: answerExecute(s, { exitCode: 0, outputDirectories: [{ path: TREE, treeDigest: tree }] }) };
    },
    code: ExitCode.REMOTE_ERROR,
    says: /remote execution on .*: output directory .*symlink 'l1'/,
  },
  {
    name: 'a blob shorter than its digest says',
    flag: '--remote_executor',
    target: '//pkg:g',
    script: (s) => ({
      Execute: answerExecute(s, { exitCode: 0, outputFiles: [{ path: OUT, digest: s.put(big) }] }),
      Read: () => ({ kind: 'partial', bytes: 1000, then: 'end' }),
    }),
    code: ExitCode.REMOTE_ERROR,
    says: new RegExp(
      `remote execution on .*: output file '${OUT}': ByteStream.Read of blobs/${digestOf(big).hash}/${big.length} on .*: the stream ended after 1000 of the digest's ${big.length} bytes`,
    ),
  },
  {
    name: 'a claimed size of 2^62 in a cache hit: refused at decoding, a warning, and the action runs locally',
    flag: '--remote_cache',
    target: '//pkg:g',
    script: () => ({
      GetActionResult: () => ({
        kind: 'answer',
        response: { exitCode: 0, outputFiles: [{ path: OUT, digest: { hash: digestOf(big).hash, sizeBytes: 2 ** 62 } }] },
      }),
    }),
    code: ExitCode.SUCCESS,
    says: /WARNING: .*GetActionResult .*on .*: INTERNAL/,
  },
  {
    name: 'a negative claimed size',
    flag: '--remote_executor',
    target: '//pkg:g',
    script: (s) => ({ Execute: answerExecute(s, { exitCode: 0, outputFiles: [{ path: OUT, digest: { hash: digestOf(big).hash, sizeBytes: -5 } }] }) }),
    code: ExitCode.REMOTE_ERROR,
    says: new RegExp(`remote execution on .*: output_files\\[${OUT}\\].digest: size_bytes must be a non-negative integer, got -5`),
  },
];

const STALLS: readonly Case[] = [
  {
    name: '--remote_executor, a stall on GetCapabilities: the remote error exit code before anything runs',
    flag: '--remote_executor',
    target: '//pkg:g',
    script: () => ({ GetCapabilities: stall }),
    code: ExitCode.REMOTE_ERROR,
    says: /ERROR: Failed to query remote execution capabilities from .*: DEADLINE_EXCEEDED/,
  },
  ...(['FindMissingBlobs', 'BatchUpdateBlobs', 'BatchReadBlobs'] as const).map(
    (method): Case => ({
      name: `--remote_executor, a stall on ${method}`,
      flag: '--remote_executor',
      target: '//pkg:g',
      script: (s) => ({ [method]: stall, Execute: answerExecute(s, executesG(s)) }),
      code: ExitCode.REMOTE_ERROR,
      says: new RegExp(`${method} .*on .*: DEADLINE_EXCEEDED`),
    }),
  ),
  {
    name: '--remote_executor, Execute cut by UNAVAILABLE, then a stall on WaitExecution',
    flag: '--remote_executor',
    target: '//pkg:g',
    script: () => ({
      Execute: () => ({ kind: 'operations', operations: [{ name: 'operations/cut', done: false }], then: { code: grpc.status.UNAVAILABLE } }),
      WaitExecution: stall,
    }),
    code: ExitCode.REMOTE_ERROR,
    says: /WaitExecution of operations\/cut on .*: DEADLINE_EXCEEDED: nothing received for 1000 ms/,
  },
  ...(['GetActionResult', 'FindMissingBlobs', 'BatchUpdateBlobs', 'Write'] as const).map(
    (method): Case => ({
      name: `--remote_cache, a stall on ${method}: a warning, and the action runs locally`,
      flag: '--remote_cache',
      target: method === 'Write' ? '//pkg:big' : '//pkg:g',
      script: () => ({ [method]: stall }),
      code: ExitCode.SUCCESS,
      says: new RegExp(`WARNING: .*${method} .*on .*: DEADLINE_EXCEEDED`),
    }),
  ),
];

const RECOVERED: readonly Case[] = [
  {
    name: 'UNAVAILABLE mid-way through an Execute stream: WaitExecution finishes it',
    flag: '--remote_executor',
    target: '//pkg:g',
    script: (s) => ({
      Execute: executeThen(s, [{ kind: 'operations', operations: [{ name: 'operations/x', done: false }], then: { code: grpc.status.UNAVAILABLE } }]),
    }),
    code: ExitCode.SUCCESS,
    says: /1 remote/,
  },
  {
    name: 'UNAVAILABLE mid-way through a ByteStream Read of a cache hit: the read resumes',
    flag: '--remote_cache',
    target: '//pkg:g',
    script: (s) => {
      s.actionCache.clear();
      const output = s.put(big);
      return {
        GetActionResult: () => ({ kind: 'answer', response: { exitCode: 0, outputFiles: [{ path: OUT, digest: output }] } }),
        Read: [{ kind: 'partial', bytes: 1024 * 1024, then: { code: grpc.status.UNAVAILABLE } }],
      };
    },
    code: ExitCode.SUCCESS,
    says: /1 remote cache hit/,
  },
  {
    name: 'RESOURCE_EXHAUSTED with a one-hour RetryInfo, once: waited for at most --remote_retry_max_delay, then it succeeds',
    flag: '--remote_executor',
    target: '//pkg:g',
    script: (s) => ({ Execute: executeThen(s, [{ kind: 'fail', code: grpc.status.RESOURCE_EXHAUSTED, retryDelayMs: 3_600_000 }]) }),
    code: ExitCode.SUCCESS,
    says: /1 remote/,
  },
];

let server: HostileReapiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('kiln build against each hostile behaviour (the built binary)', () => {
  for (const c of [...POISONED_RESULTS, ...STALLS, ...RECOVERED]) {
    it.skipIf(!READY)(c.name, { timeout: 60_000 }, async () => {
      server = await startHostileReapiServer();
      for (const [method, script] of Object.entries(c.script(server))) server.script(method as HostileMethod, script as Script);
      const ws = new E2eWorkspace(FILES);
      const before = sourceTreeHash(ws.root);
      const run = await kilnBuild(ws, [`${c.flag}=${server.url}`], c.target);
      expect(run.code, run.stderr).toBe(c.code);
      expect(run.stderr).toMatch(c.says);
      expect(run.stderr).not.toMatch(/\n\s+at .*\(.*:\d+:\d+\)/);
      expect(run.ms, run.stderr).toBeLessThan((c.boundMs ?? BOUND_MS) + MARGIN_MS);
      expect(sourceTreeHash(ws.root)).toBe(before);
      expect(run.peakRssMb).toBeLessThan(PEAK_RSS_BOUND_MB);
    });
  }
});
