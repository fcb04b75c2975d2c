import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';

/**
 * Differential test against what Bazel 4.2.3 made of `fixtures/transitions/workspace` (recorded by
 * `fixtures/transitions/record.sh`): the output directories of a split transition on a build
 * setting and of a rule transition to one of the same configurations (ST-<hash> names, the same as
 * present-day Bazel's: one option differs from the top level), what a rule sees of a split attribute
 * (`ctx.split_attr`, a list in `ctx.attr`), and analysis tests: which pass, their messages
 * (AnalysisFailureInfo causes from two levels down, `target.actions`, a native option set by
 * analysis_test_transition read through `ctx.fragments.cpp`), and the errors of rules breaking the
 * analysis test rules.
 *
 * Where present-day Bazel differs from 4.2.3 it decides, and nothing recorded here is such a case:
 * the test script's text differs (4.2.3 wrote `cat << EOF`, present-day Bazel escaped `echo` lines,
 * which Kiln writes), but not what the test prints.
 */
const FIXTURE = join(import.meta.dirname, 'fixtures', 'transitions');
const RECORDED = (name: string) => readFileSync(join(FIXTURE, 'bazel-4.2.3', name), 'utf8');
const LOCAL = '--spawn_strategy=local';
const TESTS = ['//t:triangle_test', '//t:square_test', '//t:line_fails_test', '//t:triangle_fails_test', '//t:hello_actions_test', '//t:os_test'];

function filesUnder(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else out[relative(dir, full)] = readFileSync(full, 'utf8');
    }
  };
  walk(dir);
  return out;
}

describe('transitions and analysis tests against Bazel 4.2.3', () => {
  it('names and fills the output directories as Bazel 4.2.3 does', async () => {
    const ws = new E2eWorkspace(filesUnder(join(FIXTURE, 'workspace')));
    const run = await ws.kiln(['build', LOCAL, '//app:both', '//app:choc']);
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/app/both.txt')).toBe(RECORDED('both.txt'));
    const outputs = readdirSync(join(ws.root, 'kiln-out')).filter((d) => d.startsWith('k8-'));
    expect(`${outputs.sort().join('\n')}\n`).toBe(RECORDED('output-directories.txt'));
    const [choc] = RECORDED('choc-path.txt').trim().split('\n');
    expect(ws.read(choc!.replace(/^bazel-out\//, 'kiln-out/'))).toBe('flavor=chocolate');
  });

  it('passes and fails the analysis tests as Bazel 4.2.3 does, printing the same messages', async () => {
    const ws = new E2eWorkspace(filesUnder(join(FIXTURE, 'workspace')));
    const run = await ws.kiln(['test', LOCAL, '--keep_going', ...TESTS]);
    expect(run.code, run.stderr).toBe(3);
    const statuses = run.stdout
      .split('\n')
      .map((l) => /^(\/\/t:[a-z_]+) +(PASSED|FAILED)/.exec(l))
      .filter((m) => m !== null)
      .map((m) => `${m[1]} ${m[2]}`)
      .sort();
    expect(`${statuses.join('\n')}\n`).toBe(RECORDED('statuses.txt'));
    const messages = TESTS.map((t) => {
      const log = ws
        .read(`kiln-testlogs/t/${t.slice('//t:'.length)}/test.log`)
        .split('\n')
        .slice(3)
        .join(' ')
        .trimEnd();
      return `${t}: ${log}`;
    });
    expect(`${messages.join('\n')}\n`).toBe(RECORDED('messages.txt'));
  });

  it("reports the analysis test rules' errors in Bazel 4.2.3's words", async () => {
    const ws = new E2eWorkspace(filesUnder(join(FIXTURE, 'workspace')));
    const run = await ws.kiln(['build', LOCAL, '--keep_going', '//t:acting_test', '//t:silent_test']);
    expect(run.code).toBe(1);
    for (const error of RECORDED('errors.txt').trim().split('\n')) expect(run.stderr).toContain(error);
  });
});
