import fc from 'fast-check';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError, reapi } from '../../../src/core/index.js';
import { validateAction } from '../../../scheduler/execution/index.js';
import { ActionFixture } from './action-fixture.js';

/**
 * Soundness of the input-symlink check against the kernel itself: random trees whose symlinks climb,
 * descend and chain through each other; whenever the validator accepts one, the tree is laid out a
 * few levels deep on disk and every symlink the kernel can resolve lands inside the input root.
 */
const limits = { defaultTimeoutMs: 60_000, maxTimeoutMs: 600_000 };
const top = mkdtempSync(join(tmpdir(), 'kiln-symlink-fuzz-'));
afterAll(() => rmSync(top, { recursive: true, force: true }));

type Tree = { files: string[]; symlinks: [string, string][]; dirs: [string, Tree][] };
const names = ['a', 's'];
const part = fc.constantFrom('a', 's', '.');
const ups = (max: number) => fc.integer({ min: 0, max }).map((n) => Array<string>(n).fill('..'));
/** Leading '..'s, names, '..'s after them, names: the shapes that climb, descend and chain. */
const shaped = fc
  .tuple(ups(1), fc.array(part, { maxLength: 3 }), ups(3), fc.array(part, { maxLength: 1 }))
  .map((pieces) => pieces.flat().join('/'))
  .filter((t) => t !== '');
const target = fc.oneof(fc.constantFrom('..', '.', 's/..', 'a/s/..', 'a/s/../..', 'a/a/s/../../..', '../s/..', 'a/..'), shaped);
const tree = (depth: number): fc.Arbitrary<Tree> =>
  fc
    .record({
      entries: fc.uniqueArray(fc.constantFrom(...names), { maxLength: 4 }),
      kinds: fc.array(fc.constantFrom('file', 'symlink', 'dir'), { minLength: 4, maxLength: 4 }),
      targets: fc.array(target, { minLength: 4, maxLength: 4 }),
      subs: depth === 0 ? fc.constant([] as Tree[]) : fc.array(tree(depth - 1), { minLength: 4, maxLength: 4 }),
    })
    .map(({ entries, kinds, targets, subs }) => {
      const t: Tree = { files: [], symlinks: [], dirs: [] };
      entries.sort().forEach((name, i) => {
        const kind = depth === 0 && kinds[i] === 'dir' ? 'file' : kinds[i];
        if (kind === 'file') t.files.push(name);
        else if (kind === 'symlink') t.symlinks.push([name, targets[i]!]);
        else t.dirs.push([name, subs[i]!]);
      });
      return t;
    });

async function store(f: ActionFixture, t: Tree): Promise<reapi.DirectoryInit> {
  const empty = await f.put('');
  const directories: reapi.DirectoryNodeInit[] = [];
  for (const [name, sub] of t.dirs) directories.push({ name, digest: await f.putMessage(reapi.Directory, await store(f, sub)) });
  return { files: t.files.map((name) => ({ name, digest: empty })), directories, symlinks: t.symlinks.map(([name, target]) => ({ name, target })) };
}

function layOut(dir: string, t: Tree, links: string[]): void {
  for (const name of t.files) writeFileSync(join(dir, name), '');
  for (const [name, sub] of t.dirs) {
    mkdirSync(join(dir, name));
    layOut(join(dir, name), sub, links);
  }
  for (const [name, target] of t.symlinks) {
    symlinkSync(target, join(dir, name));
    links.push(join(dir, name));
  }
}

describe('input symlink check', () => {
  it('accepts only trees whose symlinks all resolve inside the input root', async () => {
    let run = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(tree(3), async (t) => {
        const f = new ActionFixture();
        const digest = await f.action({ inputRoot: await store(f, t) });
        const outcome = await validateAction(f.cas, digest, limits).catch((e: unknown) => e);
        if (outcome instanceof InvalidArgumentError) return;
        expect(outcome).not.toBeInstanceOf(Error);
        accepted++;
        // Deep enough that a link climbing out still resolves (to the levels above the root).
        const root = join(top, `r${run++}`, 'x', 'y', 'z', 'root');
        mkdirSync(root, { recursive: true });
        const links: string[] = [];
        layOut(root, t, links);
        for (const link of links) {
          let resolved: string;
          try {
            resolved = realpathSync.native(link); // the C library's: Node's own normalises `..` lexically
          } catch {
            continue; // dangling or a loop: it leads nowhere
          }
          expect(resolved === root || resolved.startsWith(`${root}/`), `${link} -> ${resolved}`).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
    expect(accepted).toBeGreaterThan(30);
  }, 120_000);
});
