import fc from 'fast-check';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestKey, digestOf, encodeMessage, InvalidArgumentError, reapi, type Digest } from '../../src/core/index.js';
import { collectOutputs, FileCache, materializeInputRoot, type CasClient } from '../../executor/index.js';
import { prepareOutputParents } from '../../executor/build-directory.js';
import type { InputHandOut } from '../../executor/file-cache.js';

/**
 * Random input trees of files, directories and symlinks (to the canary outside, up through `..`,
 * chained, cyclic), laid out by the executor; then a random hostile "action" inside the build
 * directory; then the executor's output parents and output collection. Whatever happens, nothing
 * outside the build directory is created or changed, and no byte of the canary is ever collected.
 */
const CANARY = 'CANARY-BYTES-NEVER-COLLECTED';

let top: string;
let outside: string;
let buildRoot: string;
let cache: FileCache;
const blobs = new Map<string, Buffer>();

const snapshot = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    const stat = lstatSync(path);
    const line = `${path} ${stat.mode.toString(8)} ${stat.mtimeMs} ${stat.ino}`;
    if (e.isDirectory()) return [line, ...snapshot(path)];
    return [e.isFile() ? `${line} ${readFileSync(path, 'utf8')}` : line];
  });
let before: string[];

beforeAll(async () => {
  top = mkdtempSync(join(tmpdir(), 'kiln-confinement-'));
  outside = join(top, 'outside');
  mkdirSync(join(outside, 'sub'), { recursive: true });
  writeFileSync(join(outside, 'secret'), CANARY, { mode: 0o600 });
  writeFileSync(join(outside, 'sub', 'secret'), CANARY);
  buildRoot = join(top, 'build');
  mkdirSync(buildRoot);
  cache = await FileCache.open(join(top, 'cache'), 1 << 20, async (d, path) => writeFileSync(path, blobs.get(digestKey(d))!));
  before = snapshot(outside);
});
afterAll(() => rmSync(top, { recursive: true, force: true }));

const fakeCas = (uploaded: Buffer[]) =>
  ({
    getMany: async (digests: readonly Digest[]) => new Map(digests.map((d) => [digestKey(d), blobs.get(digestKey(d)) ?? Buffer.alloc(0)])),
    uploadMissing: async (digests: readonly Digest[], load: (d: Digest) => Promise<Buffer>) => {
      for (const d of digests) uploaded.push(await load(d));
    },
  }) as unknown as CasClient;

const put = (data: Buffer): Digest => {
  const digest = digestOf(data);
  blobs.set(digestKey(digest), data);
  return digest;
};

// Names collide across kinds on purpose, and a few are not names at all.
const name = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('a', 'b', 'c', 'secret', 'sub') },
  { weight: 1, arbitrary: fc.constantFrom('..', '.', 'a/b', '') },
);
const target = fc.oneof(
  fc.integer({ min: 1, max: 7 }).map((ups) => `${'../'.repeat(ups)}outside`),
  fc.integer({ min: 1, max: 7 }).map((ups) => `${'../'.repeat(ups)}outside/secret`),
  fc.constantFrom('/', '.', '..', 'a', 'a/b', 'a/../..', 'b/a', 'self'),
  fc.array(fc.constantFrom('a', 'b', 'c', '..', '.', 'sub'), { minLength: 1, maxLength: 6 }).map((p) => p.join('/')),
);
const absoluteOutside = fc.constantFrom('OUTSIDE', 'OUTSIDE/secret', 'OUTSIDE/sub');

type TreeSpec = {
  files: { name: string; content: string; exec: boolean }[];
  symlinks: { name: string; target: string }[];
  dirs: { name: string; sub: TreeSpec }[];
};
const treeSpec = (depth: number): fc.Arbitrary<TreeSpec> =>
  fc.record({
    files: fc.array(fc.record({ name, content: fc.constantFrom('one', 'two'), exec: fc.boolean() }), { maxLength: 3 }),
    symlinks: fc.array(fc.record({ name, target: fc.oneof(target, absoluteOutside) }), { maxLength: 3 }),
    dirs: depth === 0 ? fc.constant([]) : fc.array(fc.record({ name, sub: treeSpec(depth - 1) }), { maxLength: 2 }),
  });

const byName = <T extends { name: string }>(items: T[]) => [...items].sort((x, y) => Buffer.compare(Buffer.from(x.name), Buffer.from(y.name)));
const resolveTarget = (t: string) => t.replace(/^OUTSIDE/, outside);

function storeTree(spec: TreeSpec): Digest {
  return put(
    encodeMessage(reapi.Directory, {
      files: byName(spec.files).map((f) => ({ name: f.name, digest: put(Buffer.from(f.content)), isExecutable: f.exec })),
      directories: byName(spec.dirs).map((d) => ({ name: d.name, digest: storeTree(d.sub) })),
      symlinks: byName(spec.symlinks).map((s) => ({ name: s.name, target: resolveTarget(s.target) })),
    }).data,
  );
}

/** What the hostile action does, from inside its build directory (where a sandbox would confine it). */
type ActionStep = { kind: 'symlink' | 'mkdir' | 'file' | 'remove'; path: string[]; target: string };
const actionStep = fc.record({
  kind: fc.constantFrom<ActionStep['kind']>('symlink', 'mkdir', 'file', 'remove'),
  path: fc.array(fc.constantFrom('a', 'b', 'c', 'secret', 'sub'), { minLength: 1, maxLength: 3 }),
  target: fc.oneof(target, absoluteOutside),
});

/** Applies a step only where the action could: its parents are real directories of the build directory. */
function act(dir: string, step: ActionStep): void {
  let parent = dir;
  for (const part of step.path.slice(0, -1)) {
    parent = join(parent, part);
    if (!lstatSync(parent, { throwIfNoEntry: false })?.isDirectory()) return;
  }
  const path = join(parent, step.path[step.path.length - 1]!);
  try {
    if (step.kind === 'remove') rmSync(path, { recursive: true, force: true });
    else if (step.kind === 'symlink') symlinkSync(resolveTarget(step.target), path);
    else if (step.kind === 'mkdir') mkdirSync(path);
    else writeFileSync(path, 'made by the action', { flag: 'wx' });
  } catch {
    // Already there: an action's failed call changes nothing.
  }
}

const outputPath = fc.array(fc.constantFrom('a', 'b', 'c', 'secret', 'sub'), { minLength: 1, maxLength: 4 }).map((p) => p.join('/'));

describe('input materialisation and output collection stay inside the build directory', () => {
  it('never create, change or collect anything outside, whatever the tree, the action and the outputs', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        treeSpec(3),
        fc.array(actionStep, { maxLength: 8 }),
        fc.uniqueArray(outputPath, { maxLength: 5 }),
        fc.constantFrom('', 'a', 'a/b'),
        fc.constantFrom<InputHandOut>('link', 'copy', 'verified-copy'),
        fc.boolean(),
        async (spec, steps, outputs, workingDirectory, handOut, modern) => {
          const dir = join(buildRoot, `b${run++}`);
          mkdirSync(dir);
          const uploaded: Buffer[] = [];
          const failures: unknown[] = [];
          try {
            await materializeInputRoot(fakeCas(uploaded), cache, storeTree(spec), dir, handOut).catch((e: unknown) => failures.push(e));
            await (async () => prepareOutputParents(dir, workingDirectory, outputs))().catch((e: unknown) => failures.push(e));
            for (const step of steps) act(dir, step);
            const sorted = [...outputs].sort();
            const command = reapi.Command.decode(
              reapi.Command.encode({
                arguments: ['true'],
                workingDirectory,
                ...(modern
                  ? { outputPaths: sorted }
                  : { outputFiles: sorted.filter((_, i) => i % 2 === 0), outputDirectories: sorted.filter((_, i) => i % 2 === 1) }),
              }),
            );
            await collectOutputs(fakeCas(uploaded), dir, command, { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) });
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
          // Refusals are clear errors about the request, never a crash of another kind.
          for (const failure of failures) expect(failure).toBeInstanceOf(InvalidArgumentError);
          for (const blob of uploaded) expect(blob.includes(CANARY)).toBe(false);
          expect(snapshot(outside)).toEqual(before);
          expect(readdirSync(top).sort()).toEqual(['build', 'cache', 'outside']);
        },
      ),
      { numRuns: 150 },
    );
  }, 120_000);
});
