import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace, filesBelow } from './e2e-workspace.js';

/**
 * Aspects against Bazel 4.2.3's recorded output on the same workspace (fixtures/aspects/README.md
 * says how it was recorded): the DEBUG, ERROR and `Aspect ... up-to-date` lines, and the files built.
 */
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures/aspects');
const RECORDED_ROOT = '/tmp/asp-diff/ws/';

function recorded(name: string): string {
  return readFileSync(join(FIXTURES, 'bazel-4.2.3', name), 'utf8');
}

/**
 * The lines both tools print alike. Positions keep file and line: a target's column is its name's
 * in Bazel 4.2.3 and its call's in Kiln. DEBUG lines are sorted (Bazel analyses targets in
 * parallel). Bazel's closing `Analysis of target '//x' failed; build aborted: ...` is left out:
 * Kiln prints Bazel 2.1.0's `Analysis of target(s) failed; build aborted` there.
 */
function comparable(text: string): string[] {
  const lines = text
    .split('\n')
    .filter((l) => /^(exit |DEBUG|ERROR|Aspect|  bazel-bin)/.test(l) && !l.startsWith('ERROR: Analysis of target'))
    // The closing line: Bazel 4.2.3 wrote it as `FAILED: ...`, present-day Bazel (and Kiln) as `ERROR: ...`.
    .filter((l) => l !== 'ERROR: Build did NOT complete successfully')
    .map((l) => l.replace(RECORDED_ROOT, '').replace(/^(DEBUG|ERROR): ([^:\s]+):(\d+):\d+: /, '$1: $2:$3: '));
  const debug = lines.filter((l) => l.startsWith('DEBUG')).sort();
  return [...lines.filter((l) => !l.startsWith('DEBUG')), ...debug];
}

const CASES: readonly (readonly [string, readonly string[]])[] = [
  ['pkg.txt', ['//pkg:t', '//pkg:t2', '//pkg:n', '//pkg:via_alias']],
  ['dup.txt', ['//pkg:dup']],
  ['req.txt', ['//req:s', '//req:c', '//req:b', '//req:pr']],
  ['gen.txt', ['//gen:s', '//gen:gen', '//gen:plain']],
  ['more-d.txt', ['//more:d']],
  ['more-n.txt', ['//more:n']],
  ['aspect-counts.txt', ['--aspects=//pkg:defs.bzl%count_aspect', '--output_groups=counts', '//pkg:b']],
  ['aspect-nothing.txt', ['--aspects=//pkg:defs.bzl%count_aspect', '//pkg:b']],
  ['aspect-unknown.txt', ['--aspects=nodefs', '//pkg:b']],
  ['aspect-not-exported.txt', ['--aspects=//pkg:defs.bzl%nope', '//pkg:b']],
  ['aspect-no-file.txt', ['--aspects=//pkg:none.bzl%x', '//pkg:b']],
  ['aspect-bad-return.txt', ['--aspects=//err:defs.bzl%bad', '//err:x']],
  ['aspect-unmet.txt', ['--aspects=//err:defs.bzl%unmet', '//err:x']],
];

describe('aspects: Kiln against Bazel 4.2.3', () => {
  it.each(CASES)('%s: the same lines', { timeout: 60_000 }, async (name, args) => {
    const ws = new E2eWorkspace(filesBelow(join(FIXTURES, 'workspace')));
    const run = await ws.kiln(['build', '--spawn_strategy=local', '--symlink_prefix=bazel-', ...args]);
    expect(comparable(`exit ${run.code}\n${run.stderr}`), run.stderr).toEqual(comparable(recorded(name)));
  });

  it('the files built: the rules that read aspect providers, and a command-line aspect output group', { timeout: 60_000 }, async () => {
    const ws = new E2eWorkspace(filesBelow(join(FIXTURES, 'workspace')));
    expect((await ws.kiln(['build', '--spawn_strategy=local', '//pkg:t', '//pkg:t2', '//pkg:via_alias'])).code).toBe(0);
    expect(['t', 't2', 'via_alias'].map((n) => ws.read(`kiln-bin/pkg/${n}.txt`)).join('')).toBe(recorded('pkg-outputs.txt'));
    const counts = await ws.kiln(['build', '--spawn_strategy=local', '--aspects=//pkg:defs.bzl%count_aspect', '--output_groups=counts', '//pkg:b']);
    expect(counts.code, counts.stderr).toBe(0);
    expect(ws.read('kiln-bin/pkg/b.count')).toBe(recorded('aspect-counts-output.txt'));
  });
});
