import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyRcFiles } from '../../src/cli/rc-file.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A workspace and a home directory with the given rc files. */
function setup(workspaceRc: string, homeRc?: string, extra: Record<string, string> = {}) {
  const base = mkdtempSync(join(tmpdir(), 'kiln-rc-'));
  dirs.push(base);
  const ws = join(base, 'ws');
  const home = join(base, 'home');
  mkdirSync(ws);
  mkdirSync(home);
  writeFileSync(join(ws, '.kilnrc'), workspaceRc);
  if (homeRc !== undefined) writeFileSync(join(home, '.kilnrc'), homeRc);
  for (const [p, c] of Object.entries(extra)) writeFileSync(join(ws, p), c);
  return { ws, home };
}

describe('applyRcFiles', () => {
  it('puts common, then build, then the command lines (each from every rc file, workspace before home, as Bazel groups them) before the command line', () => {
    const { ws, home } = setup('run --r1\nbuild --b1 # comment\ncommon --c1\n# build --ignored\n', 'build --b2\n');
    expect(applyRcFiles('run', ['--x', '//t'], ws, home)).toEqual(['--c1', '--b1', '--b2', '--r1', '--x', '//t']);
    expect(applyRcFiles('build', [], ws, home)).toEqual(['--c1', '--b1', '--b2']);
    expect(applyRcFiles('query', [], ws, undefined)).toEqual(['--c1']);
  });

  it('expands --config in place, recursively, with the inherited commands, and only before --', () => {
    const { ws } = setup('build:a --define=x=1 --config=b\nbuild:b -c opt\nrun:a --run_only\n');
    expect(applyRcFiles('build', ['--jobs=2', '--config=a', '//t'], ws, undefined)).toEqual(['--jobs=2', '--define=x=1', '-c', 'opt', '//t']);
    expect(applyRcFiles('run', ['--config', 'a'], ws, undefined)).toEqual(['--define=x=1', '-c', 'opt', '--run_only']);
    expect(applyRcFiles('build', ['--', '--config=zzz'], ws, undefined)).toEqual(['--', '--config=zzz']);
  });

  it('quotes, continuation lines, import and try-import', () => {
    const { ws } = setup('import %workspace%/more.rc\ntry-import %workspace%/absent.rc\nbuild --define "a=b c" \\\n  --k\n', undefined, {
      'more.rc': "build --from_import='x y'\n",
    });
    expect(applyRcFiles('build', [], ws, undefined)).toEqual(['--from_import=x y', '--define', 'a=b c', '--k']);
  });

  it.each([
    ['build --config=nope', 'build', "Config value 'nope' is not defined in any .rc file"],
    ['build:a --config=b\nbuild:b --config=a\nbuild --config=a', 'build', 'Config expansion has a cycle: --config=a -> --config=b -> --config=a'],
    ['import %workspace%/missing.rc', 'build', 'missing.rc does not exist'],
    ['build --define "open', 'build', 'unterminated quotation'],
  ])('%j is a usage error', (rc, command, message) => {
    const { ws } = setup(rc);
    expect(() => applyRcFiles(command, [], ws, undefined)).toThrow(message);
  });
});
