import { createHash } from 'node:crypto';
import { readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Action } from '../../src/actions/index.js';
import { executeActions, executionPaths, FileDigestCache, MAX_COMMAND_LINE_BYTES, type ExecutionOptions } from '../../src/exec/index.js';
import { genrule, makeWorkspace, out, ran, RecordingReporter, source, derived, type Workspace } from './fixtures.js';

const CLIENT_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/home/someone', SECRET_TOKEN: 'do-not-leak' };

describe('executeActions (local strategy)', () => {
  let ws: Workspace;
  beforeEach(async () => {
    ws = await makeWorkspace();
  });
  afterEach(async () => {
    await ws.cleanup();
  });

  const options = (extra: Partial<ExecutionOptions> = {}): ExecutionOptions => ({
    execRoot: ws.execRoot,
    outputBase: ws.outputBase,
    clientEnv: CLIENT_ENV,
    jobs: 2,
    strategies: { spawnStrategy: ['local'] },
    ...extra,
  });

  async function build(actions: readonly Action[], extra: Partial<ExecutionOptions> = {}) {
    const reporter = new RecordingReporter();
    const summary = await executeActions(actions, options(extra), reporter);
    return { summary, reporter };
  }

  /** a.txt -> //a:up (upper) -> //b:twice (reads up twice) ; //c:other independent. */
  function chain(): Action[] {
    const up = genrule('//a:up', { srcs: [source('a/in.txt')], outs: ['up.txt'], cmd: `tr a-z A-Z < a/in.txt > ${out('a', 'up.txt')}` });
    const twice = genrule('//b:twice', {
      srcs: [derived('a/up.txt', '//a:up')],
      outs: ['twice.txt'],
      cmd: `cat ${out('a', 'up.txt')} ${out('a', 'up.txt')} > ${out('b', 'twice.txt')}`,
    });
    const other = genrule('//c:other', { srcs: [source('c/x.txt')], outs: ['o.txt'], cmd: `cp c/x.txt ${out('c', 'o.txt')}` });
    return [twice, other, up];
  }

  it('runs actions in dependency order and writes their outputs', async () => {
    await ws.write('a/in.txt', 'hi\n');
    await ws.write('c/x.txt', 'x\n');
    const { summary, reporter } = await build(chain());
    expect(summary.success).toBe(true);
    expect(await ws.read(out('b', 'twice.txt'))).toBe('HI\nHI\n');
    expect(reporter.started.indexOf('//a:up')).toBeLessThan(reporter.started.indexOf('//b:twice'));
    expect(summary.processes.local).toBe(3);
    expect(summary.totalActions).toBe(3);
  });

  it('runs --jobs actions at once: two actions that wait for each other finish only in parallel', async () => {
    const meet = (me: string, other: string) =>
      genrule(`//p:${me}`, {
        outs: [`${me}.txt`],
        cmd: `touch ${ws.root}/${me}.ready; for i in $(seq 500); do [ -e ${ws.root}/${other}.ready ] && break; sleep 0.01; done; [ -e ${ws.root}/${other}.ready ]; echo ok > ${out('p', `${me}.txt`)}`,
      });
    const { summary } = await build([meet('a', 'b'), meet('b', 'a')], { jobs: 2 });
    expect(summary.success).toBe(true);
  });

  it('never runs more than --jobs at once', async () => {
    const log = join(ws.root, 'log');
    const step = (n: number) => genrule(`//p:s${n}`, { outs: [`s${n}`], cmd: `echo start >> ${log}; sleep 0.02; echo end >> ${log}; touch ${out('p', `s${n}`)}` });
    const { summary } = await build([step(1), step(2), step(3)], { jobs: 1 });
    expect(summary.success).toBe(true);
    expect((await readFile(log, 'utf8')).trim().split('\n')).toEqual(['start', 'end', 'start', 'end', 'start', 'end']);
  });

  it('stops at the first failure, and with keep_going runs everything that does not depend on it', async () => {
    const bad = genrule('//p:bad', { outs: ['bad.txt'], cmd: `echo partial > ${out('p', 'bad.txt')}; echo boom >&2; false` });
    const after = genrule('//p:after', { srcs: [derived('p/bad.txt', '//p:bad')], outs: ['after.txt'], cmd: `touch ${out('p', 'after.txt')}` });
    const bad2 = genrule('//q:bad2', { outs: ['x.txt'], cmd: 'exit 3' });
    const good = genrule('//q:good', { outs: ['good.txt'], cmd: `echo good > ${out('q', 'good.txt')}` });

    const first = await build([bad, after, bad2, good], { jobs: 1 });
    expect(first.summary.success).toBe(false);
    expect(first.reporter.failures).toHaveLength(1);
    expect(first.reporter.started).not.toContain('//p:after');

    const kept = await build([bad, after, bad2, good], { jobs: 1, keepGoing: true });
    expect(kept.summary.success).toBe(false);
    expect(kept.summary.failures.map((f) => f.action.owner).sort()).toEqual(['//p:bad', '//q:bad2']);
    expect(kept.summary.failures.find((f) => f.action.owner === '//q:bad2')!.message).toBe('Executing genrule //q:bad2 failed (Exit 3)');
    const badFailure = kept.summary.failures.find((f) => f.action.owner === '//p:bad')!;
    expect(badFailure.stderr?.toString()).toBe('boom\n');
    expect(badFailure.command).toContain("exec env - \\\n    PATH=");
    expect(kept.reporter.started).not.toContain('//p:after');
    expect(await ws.read(out('q', 'good.txt'))).toBe('good\n');
    // The failed action's partial output was removed.
    await expect(stat(join(ws.execRoot, out('p', 'bad.txt')))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('fails a pipeline whose first command fails (set -o pipefail)', async () => {
    const pipe = genrule('//p:pipe', { outs: ['o'], cmd: `false | cat > ${out('p', 'o')}` });
    const { summary } = await build([pipe]);
    expect(summary.success).toBe(false);
    await expect(stat(join(ws.execRoot, out('p', 'o')))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('deletes stale outputs before running', async () => {
    await ws.write(out('p', 'o'), 'stale');
    const check = genrule('//p:check', { outs: ['o'], cmd: `if [ -e ${out('p', 'o')} ]; then exit 9; fi; echo fresh > ${out('p', 'o')}` });
    const { summary } = await build([check]);
    expect(summary.success).toBe(true);
    expect(await ws.read(out('p', 'o'))).toBe('fresh\n');
  });

  it('fails an action that does not create a declared output, naming it, and removes the others', async () => {
    const lazy = genrule('//p:lazy', { outs: ['made.txt', 'forgotten.txt'], cmd: `touch ${out('p', 'made.txt')}` });
    const { summary } = await build([lazy]);
    expect(summary.success).toBe(false);
    expect(summary.failures[0]!.message).toContain(`declared output '${out('p', 'forgotten.txt')}' was not created`);
    await expect(stat(join(ws.execRoot, out('p', 'made.txt')))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reports a missing source input naming it', async () => {
    const needs = genrule('//p:needs', { srcs: [source('p/nope.txt')], outs: ['o'], cmd: 'true' });
    const { summary } = await build([needs]);
    expect(summary.failures[0]!.message).toBe("//p:needs: missing input file 'p/nope.txt'");
  });

  it('runs a command longer than the 64K limit through a script file', async () => {
    const words = Array.from({ length: 12000 }, (_, i) => `w${i}`);
    const cmd = `echo ${words.join(' ')} | wc -w > ${out('p', 'count')}`;
    expect(Buffer.byteLength(cmd)).toBeGreaterThan(MAX_COMMAND_LINE_BYTES);
    const big = genrule('//p:big', { outs: ['count'], cmd });
    const { summary } = await build([big]);
    expect(summary.success).toBe(true);
    expect((await ws.read(out('p', 'count'))).trim()).toBe('12000');
    // Far beyond what exec(2) accepts for one argument (128 KiB): only a script can run it.
    const huge = genrule('//p:huge', { outs: ['n'], cmd: `x='${'y'.repeat(300_000)}'; echo \${#x} > ${out('p', 'n')}` });
    expect((await build([huge])).summary.success).toBe(true);
    expect((await ws.read(out('p', 'n'))).trim()).toBe('300000');
  });

  it('sanitizes the environment: PATH from the client, TMPDIR, nothing else; a change of PATH re-runs', async () => {
    const env = genrule('//p:env', { outs: ['env.txt'], cmd: `env | grep -v '^_=' | grep -v '^SHLVL=' | grep -v '^PWD=' | sort > ${out('p', 'env.txt')}`, env: { OWN: 'mine' } });
    expect((await build([env])).summary.success).toBe(true);
    const lines = (await ws.read(out('p', 'env.txt'))).trim().split('\n');
    const names = lines.map((l) => l.slice(0, l.indexOf('=')));
    expect(names).toEqual(['OWN', 'PATH', 'TMPDIR']);
    expect(lines).toContain(`PATH=${CLIENT_ENV.PATH}`);

    expect(ran((await build([env])).summary)).toBe(0);
    const changed = await build([env], { clientEnv: { ...CLIENT_ENV, PATH: `/opt/nothing:${CLIENT_ENV.PATH}` } });
    expect(ran(changed.summary)).toBe(1);
  });

  it('runs nothing the second time, and after touching one leaf only what depends on it', async () => {
    await ws.write('a/in.txt', 'hi\n');
    await ws.write('c/x.txt', 'x\n');
    expect(ran((await build(chain())).summary)).toBe(3);
    const second = await build(chain());
    expect(ran(second.summary)).toBe(0);
    expect(second.summary.totalActions).toBe(3);
    expect(second.summary.success).toBe(true);

    await ws.write('a/in.txt', 'changed\n');
    const third = await build(chain());
    expect(third.reporter.started.sort()).toEqual(['//a:up', '//b:twice']);
    expect(await ws.read(out('b', 'twice.txt'))).toBe('CHANGED\nCHANGED\n');

    // Same content again after a touch: the leaf's action re-runs and produces identical output,
    // and nothing is up to date by accident when an output was deleted or edited.
    const t = Date.now() / 1000;
    await utimes(join(ws.execRoot, 'c/x.txt'), t, t);
    await writeFile(join(ws.execRoot, out('b', 'twice.txt')), 'tampered');
    const fourth = await build(chain());
    expect(fourth.reporter.started).toEqual(['//b:twice']);
    expect(await ws.read(out('b', 'twice.txt'))).toBe('CHANGED\nCHANGED\n');
  });

  it('persists the digests of outputs it produced, so the next build does not read them again', async () => {
    await ws.write('a/in.txt', 'hi\n');
    await ws.write('c/x.txt', 'x\n');
    await build(chain());
    const cache = await FileDigestCache.load(executionPaths(ws.outputBase).fileDigestCache);
    const digest = await cache.digest(join(ws.execRoot, out('b', 'twice.txt')));
    expect(digest.digest.hash).toBe(createHash('sha256').update('HI\nHI\n').digest('hex'));
    expect(cache.hashedFiles).toBe(0);
  });

  it('re-runs an action whose command changed', async () => {
    const v1 = genrule('//p:g', { outs: ['o'], cmd: `echo 1 > ${out('p', 'o')}` });
    const v2 = genrule('//p:g', { outs: ['o'], cmd: `echo 2 > ${out('p', 'o')}` });
    await build([v1]);
    expect(ran((await build([v2])).summary)).toBe(1);
    expect(await ws.read(out('p', 'o'))).toBe('2\n');
  });

  it('sets the executable bit on outputs of executable actions', async () => {
    const tool = genrule('//p:tool', { outs: ['tool.sh'], cmd: `printf '#!/bin/sh\\necho run\\n' > ${out('p', 'tool.sh')}`, executable: true });
    const user = genrule('//p:user', { srcs: [derived('p/tool.sh', '//p:tool')], outs: ['r'], cmd: `${out('p', 'tool.sh')} > ${out('p', 'r')}` });
    expect((await build([tool, user])).summary.success).toBe(true);
    expect(await ws.read(out('p', 'r'))).toBe('run\n');
  });

  it('stops on abort (Ctrl-C): kills the running process, starts nothing more, fails the build', async () => {
    const controller = new AbortController();
    const reporter = new RecordingReporter();
    reporter.onStarted = () => controller.abort();
    const slow = genrule('//p:slow', { outs: ['s'], cmd: `sleep 60; touch ${out('p', 's')}` });
    const next = genrule('//p:next', { srcs: [derived('p/s', '//p:slow')], outs: ['n'], cmd: `touch ${out('p', 'n')}` });
    const started = performance.now();
    const summary = await executeActions([slow, next], options({ signal: controller.signal }), reporter);
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(summary.success).toBe(false);
    expect(summary.failures[0]!.message).toBe('Executing genrule //p:slow interrupted');
    expect(reporter.started).toEqual(['//p:slow']);
  });

  it('honours no-cache: the action runs every time', async () => {
    const always = genrule('//p:always', { outs: ['o'], cmd: `date +%N > ${out('p', 'o')}`, requirements: ['no-cache'] });
    await build([always]);
    expect(ran((await build([always])).summary)).toBe(1);
  });
});

describe('--disk_cache', () => {
  const roots: Workspace[] = [];
  afterEach(async () => {
    await Promise.all(roots.splice(0).map((w) => w.cleanup()));
  });

  it('is shared by two separate execroots: the second runs nothing and gets byte-identical outputs', async () => {
    const [one, two, cacheHolder] = [await makeWorkspace(), await makeWorkspace(), await makeWorkspace()];
    roots.push(one, two, cacheHolder);
    const diskCache = join(cacheHolder.root, 'disk-cache');
    const actions = () => [
      genrule('//a:bin', { srcs: [source('a/in.txt')], outs: ['bin.dat'], cmd: `head -c 50000 /dev/urandom > ${out('a', 'bin.dat')}; cat a/in.txt >> ${out('a', 'bin.dat')}` }),
      genrule('//a:tool', { outs: ['t.sh'], cmd: `echo 'echo t' > ${out('a', 't.sh')}`, executable: true }),
    ];
    for (const w of [one, two]) await w.write('a/in.txt', 'same\n');
    const opts = (w: Workspace): ExecutionOptions => ({ execRoot: w.execRoot, outputBase: w.outputBase, clientEnv: CLIENT_ENV, diskCache, strategies: { spawnStrategy: ['local'] } });

    const first = new RecordingReporter();
    await executeActions(actions(), opts(one), first);
    expect(ran(first.summary)).toBe(2);

    const second = new RecordingReporter();
    await executeActions(actions(), opts(two), second);
    expect(ran(second.summary)).toBe(0);
    expect(second.summary!.processes['disk cache hit']).toBe(2);
    const sha = async (w: Workspace, p: string) => createHash('sha256').update(await readFile(join(w.execRoot, p))).digest('hex');
    expect(await sha(two, out('a', 'bin.dat'))).toBe(await sha(one, out('a', 'bin.dat')));
    expect((await stat(join(two.execRoot, out('a', 't.sh')))).mode & 0o111).not.toBe(0);
    // Layout of DESIGN.md: DIR/cas/<2 hex>/<hash> and DIR/ac/<2 hex>/<hash>.
    const casHash = await sha(one, out('a', 'bin.dat'));
    await expect(stat(join(diskCache, 'cas', casHash.slice(0, 2), casHash))).resolves.toBeTruthy();

    // The restored outputs are then in the second checkout's local action cache and digest cache.
    const digests = await FileDigestCache.load(executionPaths(two.outputBase).fileDigestCache);
    await digests.digest(join(two.execRoot, out('a', 'bin.dat')));
    expect(digests.hashedFiles).toBe(0);
    const third = new RecordingReporter();
    await executeActions(actions(), opts(two), third);
    expect(third.summary!.processes['disk cache hit']).toBe(0);
    expect(ran(third.summary)).toBe(0);
  });

  it('runs the action when a disk cache blob is corrupt, instead of restoring bad bytes', async () => {
    const [one, two] = [await makeWorkspace(), await makeWorkspace()];
    roots.push(one, two);
    const diskCache = join(one.root, 'disk-cache');
    const gen = genrule('//p:g', { outs: ['o'], cmd: `echo content > ${out('p', 'o')}` });
    const opts = (w: Workspace): ExecutionOptions => ({ execRoot: w.execRoot, outputBase: w.outputBase, clientEnv: CLIENT_ENV, diskCache, strategies: { spawnStrategy: ['local'] } });
    await executeActions([gen], opts(one), new RecordingReporter());
    const hash = createHash('sha256').update('content\n').digest('hex');
    await writeFile(join(diskCache, 'cas', hash.slice(0, 2), hash), 'CONTENT\n'); // same size, wrong bytes

    const second = new RecordingReporter();
    await executeActions([gen], opts(two), second);
    expect(second.summary!.success).toBe(true);
    expect(second.summary!.processes['disk cache hit']).toBe(0);
    expect(ran(second.summary)).toBe(1);
    expect(await two.read(out('p', 'o'))).toBe('content\n');
  });

  it('skips the disk cache for no-remote-cache (keeping the local cache) and for no-cache', async () => {
    const w = await makeWorkspace();
    const other = await makeWorkspace();
    roots.push(w, other);
    const diskCache = join(w.root, 'disk-cache');
    const noRemote = genrule('//p:nr', { outs: ['o'], cmd: `echo x > ${out('p', 'o')}`, requirements: ['no-remote-cache'] });
    const noCache = genrule('//p:nc', { outs: ['o2'], cmd: `echo y > ${out('p', 'o2')}`, requirements: ['no-cache'] });
    const opts = (ws: Workspace): ExecutionOptions => ({ execRoot: ws.execRoot, outputBase: ws.outputBase, clientEnv: CLIENT_ENV, diskCache, strategies: { spawnStrategy: ['local'] } });
    const r1 = new RecordingReporter();
    await executeActions([noRemote, noCache], opts(w), r1);
    expect(ran(r1.summary)).toBe(2);
    const r2 = new RecordingReporter();
    await executeActions([noRemote, noCache], opts(w), r2);
    expect(r2.started).toEqual(['//p:nc']); // no-remote-cache still uses the local action cache
    const r3 = new RecordingReporter();
    await executeActions([noRemote, noCache], opts(other), r3);
    expect(r3.summary!.processes['disk cache hit']).toBe(0);
    expect(ran(r3.summary)).toBe(2);
  });
});
