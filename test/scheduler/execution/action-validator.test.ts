import { describe, expect, it } from 'vitest';
import { digestOf, FailedPreconditionError, InvalidArgumentError, reapi } from '../../../src/core/index.js';
import { validateAction } from '../../../scheduler/execution/index.js';
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
    ['a file and a directory of one name', { inputRoot: { files: [{ name: 'a' }], directories: [{ name: 'a', digest: digestOf(reapi.Directory.encode({})) }] } }, /duplicate entry "a"/],
    ['a name with a slash', { inputRoot: { files: [{ name: 'a/b' }] } }, /bad entry name/],
    ['a name ..', { inputRoot: { files: [{ name: '..' }] } }, /bad entry name/],
    ['a symlink escaping the root', { inputRoot: { symlinks: [{ name: 'l', target: '../outside' }] } }, /escapes the input root/],
    ['an absolute symlink', { inputRoot: { symlinks: [{ name: 'l', target: '/etc/passwd' }] } }, /escapes the input root/],
    ['a timeout above the maximum', { timeoutSeconds: 601 }, /Action.timeout: 601s is above this server's maximum of 600s/],
    ['no arguments', { args: [] }, /Command.arguments/],
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

  it('rejects bytes that are not a Directory', async () => {
    const f = new ActionFixture();
    const garbage = await f.put(Buffer.from([0xff, 0xff, 0xff]));
    const digest = await f.action({ inputRoot: { directories: [{ name: 'd', digest: garbage }] } });
    await expect(validateAction(f.cas, digest, limits)).rejects.toThrow(InvalidArgumentError);
  });
});
