import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';

// Bazel's --action_env (NAME=VALUE sets, NAME takes the client's value) and
// --incompatible_strict_action_env (a fixed PATH): in every action's environment and its key, so
// changing one runs the actions again, and an unchanged one keeps them cached.
const files = {
  WORKSPACE: '',
  BUILD: 'genrule(name = "env", outs = ["env.txt"], cmd = "echo \\"greeting=$${GREETING:-unset} home=$${HOME_AREA:-unset} path=$$PATH\\" > $@")\n',
};

describe('--action_env and --incompatible_strict_action_env', () => {
  it('puts the variables into the action and its key', async () => {
    const ws = new E2eWorkspace(files);
    const build = (...flags: string[]) =>
      ws.kiln(['build', '--spawn_strategy=local', ...flags, '//:env'], ws.root, undefined, undefined, { HOME_AREA: 'client-side' });
    const plain = await build();
    expect(plain.code, plain.stderr).toBe(0);
    expect(ws.read('kiln-bin/env.txt')).toMatch(/^greeting=unset home=unset path=/);

    const set = await build('--action_env=GREETING=hello', '--action_env=HOME_AREA');
    expect(set.executed).toEqual(['//:env']);
    expect(ws.read('kiln-bin/env.txt')).toMatch(/^greeting=hello home=client-side path=/);
    const same = await build('--action_env=GREETING=hello', '--action_env=HOME_AREA');
    expect(same.executed).toEqual([]);

    // A later flag for a name wins; a bare name the client lacks is left out.
    await build('--action_env=GREETING=hello', '--action_env=GREETING=bye', '--action_env=NOT_IN_CLIENT');
    expect(ws.read('kiln-bin/env.txt')).toMatch(/^greeting=bye home=unset /);

    const strict = await build('--incompatible_strict_action_env');
    expect(strict.code, strict.stderr).toBe(0);
    expect(ws.read('kiln-bin/env.txt').trim()).toMatch(/path=\/bin:\/usr\/bin:\/usr\/local\/bin$/);
  });

  // Checked against Bazel 4.2.3 on the same workspace: built-with=exec / run-with=target, then built-with=unset.
  it('gives --host_action_env, not --action_env, to the actions of the exec configuration (tools), as Bazel does', async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      BUILD: [
        // The tool is built in the exec configuration; it records the environment it was built with.
        'genrule(name = "tool", outs = ["tool.sh"], cmd = "echo \\"echo built-with=$${WHO:-unset}\\" > $@", executable = True)',
        'genrule(name = "use", outs = ["use.txt"], tools = [":tool"], cmd = "$(location :tool) > $@; echo run-with=$${WHO:-unset} >> $@")',
        '',
      ].join('\n'),
    });
    const build = (...flags: string[]) => ws.kiln(['build', '--spawn_strategy=local', ...flags, '//:use']);
    const run = await build('--action_env=WHO=target', '--host_action_env=WHO=exec');
    expect(run.code, run.stderr).toBe(0);
    expect(ws.read('kiln-bin/use.txt')).toBe('built-with=exec\nrun-with=target\n');
    // --action_env alone does not reach the tool's action.
    expect((await build('--action_env=WHO=target')).code).toBe(0);
    expect(ws.read('kiln-bin/use.txt')).toBe('built-with=unset\nrun-with=target\n');
    // A changed --host_action_env re-runs the tool's action (it is in the key) and what uses it.
    const changed = await build('--action_env=WHO=target', '--host_action_env=WHO=other');
    expect(changed.executed).toEqual(['//:tool', '//:use']);
    expect(ws.read('kiln-bin/use.txt')).toBe('built-with=other\nrun-with=target\n');
  });
});
