import { describe, expect, it } from 'vitest';
import { digestOf, FailedPreconditionError, InvalidArgumentError, reapi } from '../../../src/core/index.js';
import { validateAction } from '../../../scheduler/execution/index.js';
import { INPUT_DIRECTORIES_BUDGET } from '../../../scheduler/execution/action-validator.js';
import { ActionFixture } from './action-fixture.js';

const limits = { defaultTimeoutMs: 60_000, maxTimeoutMs: 600_000 };

describe('validateAction', () => {
  it('accepts a complete action and takes the platform from the Command (REAPI 2.0/2.1 clients)', async () => {
    const f = new ActionFixture();
    const file = await f.put('hello');
    const digest = await f.action({ platform: [{ name: 'OSFamily', value: 'linux' }], inputRoot: { files: [{ name: 'a.txt', digest: file }] } });
    const v = await validateAction(f.cas, digest, limits);
    expect(v.platform).toEqual([{ name: 'OSFamily', value: 'linux' }]);
    expect(v.timeoutMs).toBe(60_000);
    expect(v.command.arguments).toEqual(['/bin/true']);
  });

  it("keeps the input tree's Directory blobs for the executor, each once, within the budget", async () => {
    const f = new ActionFixture();
    const leaf = await f.putMessage(reapi.Directory, { files: [{ name: 'a.txt', digest: await f.put('hello') }] });
    // The same directory twice in the tree: kept once.
    const digest = await f.action({
      inputRoot: {
        directories: [
          { name: 'x', digest: leaf },
          { name: 'y', digest: leaf },
        ],
      },
    });
    const v = await validateAction(f.cas, digest, limits);
    const kept = (v.inputDirectories ?? []).map((b) => digestOf(b).hash);
    const root = reapi.Action.decode(await f.cas.get(digest)).inputRootDigest!.hash;
    expect(kept).toEqual([root, leaf.hash]);

    const x = await f.put('x');
    const manyFiles = Array.from({ length: Math.ceil(INPUT_DIRECTORIES_BUDGET / 80) + 1 }, (_, i) => ({ name: `f${String(i).padStart(6, '0')}`, digest: x }));
    const big = await f.putMessage(reapi.Directory, { files: manyFiles });
    const over = await f.action({
      inputRoot: {
        directories: [
          { name: 'big', digest: big },
          { name: 'small', digest: leaf },
        ],
      },
    });
    const w = await validateAction(f.cas, over, limits);
    // The big one does not fit after the root; the small one still does.
    expect((w.inputDirectories ?? []).map((b) => digestOf(b).hash)).toEqual([reapi.Action.decode(await f.cas.get(over)).inputRootDigest!.hash, leaf.hash]);
  });

  it('prefers Action.platform (REAPI 2.2+)', async () => {
    const f = new ActionFixture();
    const commandDigest = await f.putMessage(reapi.Command, { arguments: ['x'], platform: { properties: [{ name: 'a', value: 'command' }] } });
    const inputRootDigest = await f.putMessage(reapi.Directory, {});
    const digest = await f.putMessage(reapi.Action, { commandDigest, inputRootDigest, platform: { properties: [{ name: 'a', value: 'action' }] } });
    expect((await validateAction(f.cas, digest, limits)).platform).toEqual([{ name: 'a', value: 'action' }]);
  });

  it('lists every missing blob as a MISSING violation', async () => {
    const f = new ActionFixture();
    const absentFile = digestOf(Buffer.from('not stored'));
    const absentDir = digestOf(Buffer.from('no directory'));
    const digest = await f.action({
      store: { command: false },
      inputRoot: { files: [{ name: 'f', digest: absentFile }], directories: [{ name: 'd', digest: absentDir }] },
    });
    const err = await validateAction(f.cas, digest, limits).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FailedPreconditionError);
    const subjects = (err as FailedPreconditionError).violations.map((v) => `${v.type} ${v.subject}`);
    expect(subjects).toHaveLength(3);
    expect(subjects).toContain(`MISSING blobs/${absentFile.hash}/${absentFile.sizeBytes}`);
    expect(subjects).toContain(`MISSING blobs/${absentDir.hash}/${absentDir.sizeBytes}`);
  });

  it('reports a missing Action itself as MISSING', async () => {
    const f = new ActionFixture();
    const digest = await f.action({ store: { action: false } });
    const err = (await validateAction(f.cas, digest, limits).catch((e: unknown) => e)) as FailedPreconditionError;
    expect(err.violations).toEqual([expect.objectContaining({ type: 'MISSING', subject: `blobs/${digest.hash}/${digest.sizeBytes}` })]);
  });

  const invalid: [string, Parameters<ActionFixture['action']>[0], RegExp][] = [
    ['unsorted files', { inputRoot: { files: [{ name: 'b' }, { name: 'a' }] } }, /not sorted/],
    ['duplicate files', { inputRoot: { files: [{ name: 'a' }, { name: 'a' }] } }, /duplicate/],
    [
      'a file and a directory of one name',
      { inputRoot: { files: [{ name: 'a' }], directories: [{ name: 'a', digest: digestOf(reapi.Directory.encode({})) }] } },
      /duplicate entry "a"/,
    ],
    ['a name with a slash', { inputRoot: { files: [{ name: 'a/b' }] } }, /bad entry name/],
    ['a name ..', { inputRoot: { files: [{ name: '..' }] } }, /bad entry name/],
    ['a symlink escaping the root', { inputRoot: { symlinks: [{ name: 'l', target: '../outside' }] } }, /escapes the input root/],
    ['an absolute symlink', { inputRoot: { symlinks: [{ name: 'l', target: '/etc/passwd' }] } }, /escapes the input root/],
    ['a timeout above the maximum', { timeoutSeconds: 601 }, /Action.timeout: 601s is above this server's maximum of 600s/],
    ['no arguments', { args: [] }, /Command.arguments/],
    ['an output path with a trailing slash', { command: { outputPaths: ['a/'] } }, /output_paths: "a\/" must not end with a slash/],
    ['an output path with a double slash', { command: { outputPaths: ['a//b'] } }, /output_paths: "a\/\/b" has an empty component/],
    ['the output path .', { command: { outputPaths: ['.'] } }, /output_paths: "\." has a '\.' component/],
    ['an absolute output path', { command: { outputPaths: ['/etc/passwd'] } }, /must be relative/],
    ['an output path with ..', { command: { outputPaths: ['a/../b'] } }, /has a '\.\.' component/],
    ['an output file with ..', { command: { outputPaths: [], outputFiles: ['../x'] } }, /output_files: "\.\.\/x" has a '\.\.' component/],
    ['a working directory with ..', { command: { workingDirectory: 'a/..' } }, /working_directory/],
    ['unsorted output paths', { command: { outputPaths: ['b', 'a'] } }, /output_paths: not sorted \("b" comes before "a"\)/],
    ['duplicate output paths', { command: { outputPaths: ['a', 'a'] } }, /output_paths: "a" is listed twice/],
    ['unsorted output directories', { command: { outputPaths: [], outputDirectories: ['z', 'y'] } }, /output_directories: not sorted/],
    [
      'an output file that is also an output directory',
      { command: { outputPaths: [], outputFiles: ['a'], outputDirectories: ['a'] } },
      /"a" is also an output directory/,
    ],
    ['an output file under another output file', { command: { outputPaths: [], outputFiles: ['a', 'a/b'] } }, /"a" is a parent of output file "a\/b"/],
    [
      'unsorted environment variables',
      {
        command: {
          environmentVariables: [
            { name: 'PATH', value: '/bin' },
            { name: 'HOME', value: '/' },
          ],
        },
      },
      /environment_variables: not sorted \("PATH" comes before "HOME"\)/,
    ],
    [
      'a duplicate environment variable',
      {
        command: {
          environmentVariables: [
            { name: 'A', value: '1' },
            { name: 'A', value: '2' },
          ],
        },
      },
      /environment_variables: "A" is listed twice/,
    ],
    ['a symlink climbing out after a name', { inputRoot: { symlinks: [{ name: 'l', target: 'a/../../b' }] } }, /climbs above its own directory/],
    [
      'a symlink climbing out through another one',
      {
        inputRoot: {
          symlinks: [
            { name: 's', target: '.' },
            { name: 't', target: 's/..' },
          ],
        },
      },
      /symlink "t" -> "s\/\.\." climbs above its own directory/,
    ],
    [
      'a cycle of symlinks resolved through the tree',
      {
        inputRoot: {
          symlinks: [
            { name: 'a', target: 'b/..' },
            { name: 'b', target: 'a/..' },
          ],
        },
      },
      /goes through more than 40 symlinks/,
    ],
  ];
  for (const [what, options, message] of invalid) {
    it(`rejects ${what} with INVALID_ARGUMENT`, async () => {
      const f = new ActionFixture();
      const digest = await f.action(options);
      const err = await validateAction(f.cas, digest, limits).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as Error).message).toMatch(message);
    });
  }

  it('checks symlinks against the depth of their directory', async () => {
    const f = new ActionFixture();
    const sub = await f.putMessage(reapi.Directory, { symlinks: [{ name: 'up', target: '../sibling' }] });
    const ok = await f.action({ inputRoot: { directories: [{ name: 'sub', digest: sub }] } });
    await expect(validateAction(f.cas, ok, limits)).resolves.toBeDefined();
    const deeper = await f.putMessage(reapi.Directory, { symlinks: [{ name: 'up', target: '../../../x' }] });
    const bad = await f.action({ inputRoot: { directories: [{ name: 'sub', digest: deeper }] } });
    await expect(validateAction(f.cas, bad, limits)).rejects.toThrow(/sub.*escapes the input root/);
  });

  it('refuses a chain of symlinks that together leave the input root, though each stays inside on paper', async () => {
    // a1/.../a10/s -> ../../.. (to a7), and y -> a1/.../a10/s/../../../../../../../../../..: lexically
    // y stays at depth 1, but through s it climbs 3 levels above the root.
    const f = new ActionFixture();
    let child = await f.putMessage(reapi.Directory, { symlinks: [{ name: 's', target: '../../..' }] });
    for (let i = 10; i >= 2; i--) child = await f.putMessage(reapi.Directory, { directories: [{ name: `a${i}`, digest: child }] });
    const chain = `${Array.from({ length: 10 }, (_, i) => `a${i + 1}`).join('/')}/s/${Array(10).fill('..').join('/')}`;
    const digest = await f.action({ inputRoot: { directories: [{ name: 'a1', digest: child }], symlinks: [{ name: 'y', target: chain }] } });
    const err = await validateAction(f.cas, digest, limits).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toMatch(/symlink "y" -> .* climbs above its own directory/);
    // The first link alone, and canonical links through it, are fine.
    const inside = await f.action({
      inputRoot: { directories: [{ name: 'a1', digest: child }], symlinks: [{ name: 'z', target: 'a1/a2/a3/a4/a5/a6/a7/a8/a9/a10/s/x' }] },
    });
    await expect(validateAction(f.cas, inside, limits)).resolves.toBeDefined();
  });

  it("accepts '..' after a name when the tree shows it stays inside (REAPI allows it anywhere)", async () => {
    const f = new ActionFixture();
    const leaf = await f.putMessage(reapi.Directory, { symlinks: [{ name: 'up', target: '..' }] });
    const dir = await f.putMessage(reapi.Directory, { directories: [{ name: 'b', digest: leaf }] });
    const digest = await f.action({
      inputRoot: {
        directories: [{ name: 'a', digest: dir }],
        symlinks: [
          { name: 'c', target: 'a/b/up/../x' }, // a/b/up -> a/b/.. = a; a/.. = the root; x
          { name: 'd', target: 'missing/../a' },
        ],
      },
    });
    await expect(validateAction(f.cas, digest, limits)).resolves.toBeDefined();
    // Leading '..' and a '..' after a name: neither rule can vouch for it.
    const mixed = await f.putMessage(reapi.Directory, { symlinks: [{ name: 'l', target: '../a/../b' }] });
    const refused = await f.action({ inputRoot: { directories: [{ name: 'sub', digest: mixed }] } });
    await expect(validateAction(f.cas, refused, limits)).rejects.toThrow(/"l" -> "\.\.\/a\/\.\.\/b" has '\.\.' both before and after a name/);
  });

  it('refuses an input tree 3,000 directories deep with a short INVALID_ARGUMENT', async () => {
    const f = new ActionFixture();
    let child = await f.putMessage(reapi.Directory, {});
    for (let i = 0; i < 3000; i++) child = await f.putMessage(reapi.Directory, { directories: [{ name: 'd', digest: child }] });
    const digest = await f.action({ inputRoot: { directories: [{ name: 'd', digest: child }] } });
    const err = await validateAction(f.cas, digest, limits).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toMatch(/the input tree nests directories deeper than 512 levels/);
    expect((err as Error).message.length).toBeLessThan(400);
  });

  it('refuses input paths too long for an executor to create', async () => {
    const f = new ActionFixture();
    let child = await f.putMessage(reapi.Directory, {});
    for (let i = 0; i < 20; i++) child = await f.putMessage(reapi.Directory, { directories: [{ name: 'n'.repeat(200), digest: child }] });
    const digest = await f.action({ inputRoot: { directories: [{ name: 'top', digest: child }] } });
    await expect(validateAction(f.cas, digest, limits)).rejects.toThrow(/above this server's limit of 3072/);
  });

  it('rejects bytes that are not a Directory', async () => {
    const f = new ActionFixture();
    const garbage = await f.put(Buffer.from([0xff, 0xff, 0xff]));
    const digest = await f.action({ inputRoot: { directories: [{ name: 'd', digest: garbage }] } });
    await expect(validateAction(f.cas, digest, limits)).rejects.toThrow(InvalidArgumentError);
  });
});
