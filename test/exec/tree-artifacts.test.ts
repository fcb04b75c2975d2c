import { createHash } from 'node:crypto';
import { lstat, readFile, readlink, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Action, DerivedArtifact } from '../../src/actions/index.js';
import { reapi } from '../../src/core/index.js';
import { detectSandboxSupport, type SandboxSupport } from '../../src/core/sandbox/index.js';
import { executeActions, type ExecutionOptions, type StrategyName } from '../../src/exec/index.js';
import { needTool } from '../setup/need-tool.js';
import { BIN, genrule, makeWorkspace, out, ran, RecordingReporter, type Workspace } from './fixtures.js';

const CLIENT_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const bwrap = process.env.KILN_BWRAP;
const bwrapHere = needTool('bubblewrap', bwrap !== undefined, 'run scripts/test-setup.d/10-bubblewrap.sh (npm test does)');

const tree = (pkgPath: string, owner: string): DerivedArtifact => ({ kind: 'derived', execPath: `${BIN}/${pkgPath}`, root: BIN, owner, type: 'directory' });
const symlinkArtifact = (pkgPath: string, owner: string): DerivedArtifact => ({
  kind: 'derived',
  execPath: `${BIN}/${pkgPath}`,
  root: BIN,
  owner,
  type: 'symlink',
});

/** An action whose one output is a tree artifact made by `cmd` ($OUT names it). */
function treeAction(label: string, name: string, cmd: string): Action {
  const pkg = label.slice(2, label.indexOf(':'));
  const output = tree(`${pkg}/${name}`, label);
  return { ...genrule(label, { outs: [], cmd: cmd.replaceAll('$OUT', output.execPath) }), outputs: [output] };
}

/** A tree with files, a nested directory, an empty one and a relative symlink, as //t:tree makes it. */
const TREE_CMD = 'mkdir -p $OUT/sub $OUT/empty && echo a > $OUT/a.txt && echo b > $OUT/sub/b.txt && ln -s a.txt $OUT/link';
const TREE = out('t', 'dir');

/** //u:use reads the tree's files, and lists it, into list.txt. */
function consumer(): Action {
  return genrule('//u:use', {
    srcs: [tree('t/dir', '//t:tree')],
    outs: ['list.txt'],
    cmd: `(cd ${TREE} && find . | sort && cat link sub/b.txt) > ${out('u', 'list.txt')}`,
  });
}

const LISTING = '.\n./a.txt\n./empty\n./link\n./sub\n./sub/b.txt\na\nb\n';

describe.each<[StrategyName, boolean]>([
  ['local', true],
  ['sandboxed', bwrapHere],
])('tree artifacts (%s strategy)', (strategy, runs) => {
  let ws: Workspace;
  let sandbox: SandboxSupport | undefined;
  beforeAll(async () => {
    if (strategy === 'sandboxed' && runs) sandbox = await detectSandboxSupport({ bwrapPath: bwrap });
  });
  beforeEach(async () => {
    ws = await makeWorkspace();
  });
  afterEach(async () => {
    await ws.cleanup();
  });

  const build = async (actions: readonly Action[], extra: Partial<ExecutionOptions> = {}) => {
    const reporter = new RecordingReporter();
    const options: ExecutionOptions = {
      execRoot: ws.execRoot,
      outputBase: ws.outputBase,
      clientEnv: CLIENT_ENV,
      strategies: { spawnStrategy: [strategy] },
      ...(sandbox ? { sandbox } : {}),
      ...extra,
    };
    const summary = await executeActions(actions, options, reporter);
    return { summary, reporter };
  };

  it.skipIf(!runs)('collects a tree (files, nested and empty directories, a relative symlink) and stages it whole for a dependent', async () => {
    const { summary } = await build([consumer(), treeAction('//t:tree', 'dir', TREE_CMD)]);
    expect(summary.failures.map((f) => f.message)).toEqual([]);
    expect(await ws.read(out('u', 'list.txt'))).toBe(LISTING);
    expect(await readlink(join(ws.execRoot, TREE, 'link'))).toBe('a.txt');
  });

  it.skipIf(!runs)('runs nothing the second time; a file changed inside the tree reruns its action only', async () => {
    await build([consumer(), treeAction('//t:tree', 'dir', TREE_CMD)]);
    const again = await build([consumer(), treeAction('//t:tree', 'dir', TREE_CMD)]);
    expect(ran(again.summary)).toBe(0);
    await writeFile(join(ws.execRoot, TREE, 'sub/b.txt'), 'edited by hand\n');
    const repaired = await build([consumer(), treeAction('//t:tree', 'dir', TREE_CMD)]);
    expect(repaired.reporter.started).toEqual(['//t:tree']);
    expect(await ws.read(`${TREE}/sub/b.txt`)).toBe('b\n');
  });

  it.skipIf(!runs)('a changed tree reruns its dependents', async () => {
    await build([consumer(), treeAction('//t:tree', 'dir', TREE_CMD)]);
    const changed = await build([consumer(), treeAction('//t:tree', 'dir', `${TREE_CMD} && echo c > $OUT/c.txt`)]);
    expect(changed.reporter.started.sort()).toEqual(['//t:tree', '//u:use']);
    expect(await ws.read(out('u', 'list.txt'))).toContain('./c.txt');
  });

  it.skipIf(!runs)('the directory exists, empty, when the action starts (as Bazel makes it)', async () => {
    const { summary } = await build([treeAction('//t:tree', 'dir', 'test -d $OUT && test -z "$(ls -A $OUT)"')]);
    expect(summary.success).toBe(true);
    expect(await readdir(join(ws.execRoot, TREE))).toEqual([]);
  });

  it.skipIf(!runs)(
    "fails, in Bazel's words, a symlink leaving the tree, a file where a directory was declared, a declared symlink that is a file",
    async () => {
      const escaping = await build([treeAction('//t:tree', 'dir', 'ln -s ../../../../etc $OUT/esc')]);
      expect(escaping.summary.failures[0]!.message).toBe(
        `Executing genrule //t:tree failed: A TreeArtifact may not contain relative symlinks whose target paths traverse outside of the TreeArtifact, found ${TREE}/esc pointing to ../../../../etc.`,
      );
      await expect(lstat(join(ws.execRoot, TREE))).rejects.toThrow(/ENOENT/);

      const file = await build([treeAction('//t:tree', 'dir', 'rmdir $OUT && echo x > $OUT')]);
      expect(file.summary.failures[0]!.message).toBe(`Executing genrule //t:tree failed: TreeArtifact t/dir was not created`);

      const link = symlinkArtifact('s/link', '//s:link');
      const notLink = await build([{ ...genrule('//s:link', { outs: [], cmd: `echo x > ${link.execPath}` }), outputs: [link] }]);
      expect(notLink.summary.failures[0]!.message).toBe(`Executing genrule //s:link failed: declared output '${link.execPath}' is not a symlink`);
    },
  );

  it.skipIf(!runs)('keeps a declared symlink unresolved (dangling is fine) and stages it as itself', async () => {
    const link = symlinkArtifact('s/link', '//s:link');
    const make = { ...genrule('//s:link', { outs: [], cmd: `ln -s ../no/such/file ${link.execPath}` }), outputs: [link] };
    const read = genrule('//s:read', { srcs: [link], outs: ['target.txt'], cmd: `readlink ${link.execPath} > ${out('s', 'target.txt')}` });
    const { summary } = await build([read, make]);
    expect(summary.failures.map((f) => f.message)).toEqual([]);
    expect(await ws.read(out('s', 'target.txt'))).toBe('../no/such/file\n');
    expect(ran((await build([read, make])).summary)).toBe(0);
  });

  it.skipIf(!runs)('expands a tree on the command line once it exists (Args with expand_directories)', async () => {
    const listed = out('u', 'args.txt');
    const use: Action = {
      ...genrule('//u:args', { srcs: [tree('t/dir', '//t:tree')], outs: ['args.txt'], cmd: '' }),
      argv: ['/bin/bash', '-c', `echo "$@" > ${listed}`, '', TREE],
      argvWithTrees: (filesOf) => ['/bin/bash', '-c', `echo "$@" > ${listed}`, '', ...filesOf(TREE)],
    };
    const { summary } = await build([use, treeAction('//t:tree', 'dir', TREE_CMD)]);
    expect(summary.failures.map((f) => f.message)).toEqual([]);
    expect(await ws.read(listed)).toBe(`${TREE}/a.txt ${TREE}/link ${TREE}/sub/b.txt\n`);
  });
});

describe('tree artifacts in the disk cache', () => {
  const spaces: Workspace[] = [];
  afterEach(async () => {
    await Promise.all(spaces.splice(0).map((w) => w.cleanup()));
  });

  it('stores a tree as Bazel does (ActionResult.output_directories naming a Tree in the CAS) and restores it in another execroot', async () => {
    const [one, two, holder] = [await makeWorkspace(), await makeWorkspace(), await makeWorkspace()];
    spaces.push(one, two, holder);
    const diskCache = join(holder.root, 'disk-cache');
    const actions = () => [consumer(), treeAction('//t:tree', 'dir', TREE_CMD)];
    const options = (w: Workspace): ExecutionOptions => ({
      execRoot: w.execRoot,
      outputBase: w.outputBase,
      clientEnv: CLIENT_ENV,
      diskCache,
      strategies: { spawnStrategy: ['local'] },
    });
    const first = new RecordingReporter();
    await executeActions(actions(), options(one), first);
    expect(ran(first.summary)).toBe(2);

    const second = new RecordingReporter();
    await executeActions(actions(), options(two), second);
    expect(second.summary!.processes['disk cache hit']).toBe(2);
    expect(await two.read(out('u', 'list.txt'))).toBe(LISTING);
    expect(await readdir(join(two.execRoot, TREE, 'empty'))).toEqual([]);
    expect(await readlink(join(two.execRoot, TREE, 'link'))).toBe('a.txt');

    // Some ActionResult names the tree by tree_digest, and that Tree's root lists the entries.
    const results = await Promise.all(
      (await readdir(join(diskCache, 'ac'), { recursive: true, withFileTypes: true }))
        .filter((e) => e.isFile())
        .map(async (e) => reapi.ActionResult.decode(await readFile(join(e.parentPath, e.name)))),
    );
    const withTree = results.find((r) => r.outputDirectories.length > 0)!;
    expect(withTree.outputDirectories[0]!.path).toBe(TREE);
    const digest = withTree.outputDirectories[0]!.treeDigest!;
    const stored = reapi.Tree.decode(await readFile(join(diskCache, 'cas', digest.hash.slice(0, 2), digest.hash)));
    expect(stored.root!.files.map((f) => f.name)).toEqual(['a.txt']);
    expect(stored.root!.directories.map((d) => d.name)).toEqual(['empty', 'sub']);
    expect(stored.root!.symlinks).toEqual([expect.objectContaining({ name: 'link', target: 'a.txt' })]);
  });

  it('misses when a file of a cached tree is gone from the CAS, and runs the action', async () => {
    const [one, two, holder] = [await makeWorkspace(), await makeWorkspace(), await makeWorkspace()];
    spaces.push(one, two, holder);
    const diskCache = join(holder.root, 'disk-cache');
    const options = (w: Workspace): ExecutionOptions => ({
      execRoot: w.execRoot,
      outputBase: w.outputBase,
      clientEnv: CLIENT_ENV,
      diskCache,
      strategies: { spawnStrategy: ['local'] },
    });
    await executeActions([treeAction('//t:tree', 'dir', 'echo unique-4711 > $OUT/f')], options(one), new RecordingReporter());
    const hash = createHash('sha256').update('unique-4711\n').digest('hex');
    await rm(join(diskCache, 'cas', hash.slice(0, 2), hash));
    const second = new RecordingReporter();
    await executeActions([treeAction('//t:tree', 'dir', 'echo unique-4711 > $OUT/f')], options(two), second);
    expect(ran(second.summary)).toBe(1);
    expect(await two.read(`${TREE}/f`)).toBe('unique-4711\n');
  });
});
