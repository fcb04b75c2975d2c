import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace, filesBelow } from './e2e-workspace.js';

/**
 * cquery and aquery against Bazel 4.2.3's recorded output on the same workspace
 * (fixtures/configured-query/README.md says how it was recorded). Where Bazel 4.2.3 and
 * present-day Bazel differ, the comparison leaves the difference out and says why.
 */
const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures/configured-query');
const RECORDED_ROOT = '/tmp/cq-ref/ws';

function recorded(name: string, bazel = 'bazel-4.2.3'): string {
  return readFileSync(join(FIXTURES, bazel, name), 'utf8');
}

/**
 * Configuration ids are hashes of different option sets in the two tools: each line's id becomes
 * its role, `T` for the configuration of the first (top-level) line, `E` for any other (Bazel
 * 4.2.3's HOST configuration, present-day Bazel's and Kiln's exec configuration), `null` kept.
 */
function roles(text: string): string[] {
  const lines = text.split('\n').filter((l) => l !== '');
  const top = /\((\w+)\)$/.exec(lines[0] ?? '')?.[1];
  return lines.map((l) => l.replace(/\((\w+)\)$/, (_m, id: string) => (id === 'null' ? '(null)' : id === top ? '(T)' : '(E)'))).sort();
}

/** The fields of aquery's text output both tools print (Bazel 4.2.3 has no `Execution platform`, present-day Bazel and Kiln do). */
function actionFields(
  text: string,
): { header: string; mnemonic: string; target: string; configuration: string; outputs: string; inputs: string; command: string }[] {
  return text
    .split(/\n(?=action ')/)
    .filter((block) => block.startsWith('action '))
    .map((block) => {
      const field = (name: string) => new RegExp(`^  ${name}: (.*)$`, 'm').exec(block)?.[1] ?? '';
      const command = /Command Line: \(exec ([\s\S]*?)\)\n/.exec(block)?.[1] ?? '';
      return {
        header: block.split('\n')[0]!,
        mnemonic: field('Mnemonic'),
        target: field('Target'),
        configuration: field('Configuration'),
        outputs: field('Outputs'),
        inputs: field('Inputs'),
        command: withoutGenruleSetup(command),
      };
    });
}

/**
 * A genrule's command begins with the tool's own setup: Bazel sources
 * `external/bazel_tools/tools/genrule/genrule-setup.sh` (a file Kiln does not have), Kiln runs its
 * equivalent (`set -euo pipefail`) inline. What follows is the user's command, expanded.
 */
function withoutGenruleSetup(command: string): string {
  return command.replace(/(^|')source external\/bazel_tools\/tools\/genrule\/genrule-setup\.sh; /, '$1').replace(/(^|')set -euo pipefail; /, '$1');
}

/** The exec configuration's directory: `host` in Bazel 4.2.3, `k8-opt-exec` in Kiln (present-day Bazel: `k8-opt-exec-<hash>`). */
function execDirectories(paths: string): string[] {
  return paths
    .replace(/^\[|\]$/g, '')
    .split(', ')
    .filter((p) => p !== '')
    .map((p) => p.replace(/^bazel-out\/[^/]*(host|exec)[^/]*\//, 'bazel-out/EXEC/'));
}

interface JsonAction {
  readonly mnemonic: string;
  readonly target: string;
  readonly configuration: string;
  readonly outputs: string[];
  readonly primaryOutput: string;
  readonly arguments: string[];
  readonly inputs: string[];
}

/** An ActionGraphContainer in proto3 JSON with every id resolved: paths from path fragments, inputs from the dep sets. */
function resolvedActions(json: string): JsonAction[] {
  const c = JSON.parse(json) as {
    artifacts: { id: number; pathFragmentId: number }[];
    actions: {
      targetId: number;
      mnemonic: string;
      configurationId: number;
      arguments: string[];
      inputDepSetIds?: number[];
      outputIds: number[];
      primaryOutputId: number;
    }[];
    targets: { id: number; label: string }[];
    depSetOfFiles: { id: number; directArtifactIds?: number[]; transitiveDepSetIds?: number[] }[];
    configuration: { id: number; mnemonic: string }[];
    pathFragments: { id: number; label: string; parentId?: number }[];
  };
  const fragments = new Map(c.pathFragments.map((f) => [f.id, f]));
  const pathOf = (id: number): string => {
    const f = fragments.get(id)!;
    return f.parentId ? `${pathOf(f.parentId)}/${f.label}` : f.label;
  };
  const artifacts = new Map(c.artifacts.map((a) => [a.id, pathOf(a.pathFragmentId)]));
  const depSets = new Map(c.depSetOfFiles.map((d) => [d.id, d]));
  const filesOf = (id: number): string[] => {
    const d = depSets.get(id)!;
    return [...(d.directArtifactIds ?? []).map((a) => artifacts.get(a)!), ...(d.transitiveDepSetIds ?? []).flatMap(filesOf)];
  };
  return c.actions.map((a) => ({
    mnemonic: a.mnemonic,
    target: c.targets.find((t) => t.id === a.targetId)!.label,
    configuration: c.configuration.find((x) => x.id === a.configurationId)!.mnemonic,
    outputs: a.outputIds.map((o) => artifacts.get(o)!),
    primaryOutput: artifacts.get(a.primaryOutputId)!,
    arguments: a.arguments.map(withoutGenruleSetup),
    inputs: (a.inputDepSetIds ?? []).flatMap(filesOf),
  }));
}

/** Bazel 4.2.3's genrule inputs besides Kiln's: its setup script and the tool's runfiles middleman, which Kiln does not have. */
function bazelOnlyInput(path: string): boolean {
  return path.startsWith('external/bazel_tools/') || path.includes('/internal/_middlemen/');
}

describe('cquery and aquery against Bazel 4.2.3', () => {
  const workspace = () => new E2eWorkspace(filesBelow(join(FIXTURES, 'workspace')));

  it('cquery deps: the same configured targets, tools in the exec configuration, source files in none', async () => {
    const ws = workspace();
    const run = await ws.kiln(['cquery', 'deps(//pkg:fg)', '--noimplicit_deps']);
    expect(run.code).toBe(0);
    expect(roles(run.stdout)).toEqual(roles(recorded('cquery-deps-noimplicit.txt')));
    expect(roles(run.stdout)).toContain('//pkg:tool (E)');
  });

  it('cquery --output=label_kind -c opt', async () => {
    const run = await workspace().kiln(['cquery', 'deps(//pkg:fg)', '--noimplicit_deps', '--output=label_kind', '-c', 'opt']);
    expect(run.code).toBe(0);
    expect(roles(run.stdout)).toEqual(roles(recorded('cquery-deps-label-kind-opt.txt')));
  });

  it('cquery --output=build resolves the select() in the configuration', async () => {
    const ws = workspace();
    const run = await ws.kiln(['cquery', '//pkg:gen', '--output=build', '-c', 'opt']);
    expect(run.code).toBe(0);
    // The rule's column is loading's (Kiln records the call's first column, Bazel its opening parenthesis): left out here.
    const normal = (s: string, root: string) =>
      s
        .split(root)
        .join('ROOT')
        .replace(/BUILD:(\d+):\d+/g, 'BUILD:$1:C');
    expect(normal(run.stdout, ws.root)).toBe(normal(recorded('cquery-build-opt.txt'), RECORDED_ROOT));
  });

  it('cquery --output=transitions=lite: the same attribute edges into configured targets', async () => {
    const run = await workspace().kiln(['cquery', 'deps(//pkg:fg)', '--noimplicit_deps', '--output=transitions', '--transitions=lite']);
    expect(run.code).toBe(0);
    // Transition names are Bazel's classes: 4.2.3's HostTransition and test-trimming transitions are
    // present-day Bazel's ExecutionTransition and no transition; the edges and where they lead are compared.
    const edges = (text: string) => [...text.matchAll(/^ {2}(\w+)#([^#]+)#.*$/gm)].map((m) => `${m[1]}#${m[2]}`).sort();
    expect(edges(run.stdout)).toEqual(edges(recorded('cquery-transitions-lite.txt')));
    expect(run.stdout).toContain('tools#//pkg:tool#ExecutionTransition -> ');
    expect(
      roles(
        run.stdout
          .split('\n')
          .filter((l) => !l.startsWith(' '))
          .join('\n'),
      ),
    ).toEqual(
      roles(
        recorded('cquery-transitions-lite.txt')
          .split('\n')
          .filter((l) => !l.startsWith(' '))
          .join('\n'),
      ),
    );
  });

  it('config(//pkg:tool, target) gives the tool in the target configuration', async () => {
    const run = await workspace().kiln(['cquery', 'config(//pkg:tool, target)']);
    expect(run.code).toBe(0);
    expect(roles(run.stdout)).toEqual(roles(recorded('cquery-config-target.txt')));
  });

  it('cquery --output=starlark with target bound', async () => {
    const run = await workspace().kiln(['cquery', '//pkg:gen', '--output=starlark', '--starlark:expr=target.files']);
    expect(run).toMatchObject({ code: 0, stdout: recorded('cquery-starlark-files.txt') });
  });

  it('aquery text: the same action, outputs and command; inputs less what only Bazel has', async () => {
    for (const [args, file] of [
      [['aquery', '//pkg:gen'], 'aquery-gen.txt'],
      [['aquery', 'outputs(".*out.txt", deps(//pkg:fg))'], 'aquery-outputs.txt'],
    ] as const) {
      const run = await workspace().kiln([...args]);
      expect(run.code).toBe(0);
      const mine = actionFields(run.stdout);
      const theirs = actionFields(recorded(file));
      expect(mine.length).toBe(theirs.length);
      mine.forEach((m, i) => {
        const t = theirs[i]!;
        expect({ ...m, inputs: '' }).toEqual({ ...t, inputs: '' });
        expect(execDirectories(m.inputs).sort()).toEqual(
          execDirectories(t.inputs)
            .filter((p) => !bazelOnlyInput(p))
            .sort(),
        );
      });
      // Present-day Bazel's lines, which 4.2.3 lacks.
      expect(run.stdout).toMatch(/^ {2}Execution platform: @local_config_platform\/\/:host$/m);
      expect(run.stdout).toMatch(/^# Configuration: [0-9a-f]{64}$/m);
    }
  });

  it('aquery --output=jsonproto: the same action graph once its ids are resolved', async () => {
    for (const [args, file] of [
      [['aquery', '//pkg:gen', '--output=jsonproto'], 'aquery-gen.json'],
      [['aquery', 'mnemonic("Genrule", deps(//pkg:fg))', '--output=jsonproto'], 'aquery-mnemonic-genrule.json'],
    ] as const) {
      const run = await workspace().kiln([...args]);
      expect(run.code).toBe(0);
      const mine = resolvedActions(run.stdout);
      const theirs = resolvedActions(recorded(file));
      expect(mine.map((a) => ({ ...a, inputs: [] }))).toEqual(theirs.map((a) => ({ ...a, inputs: [] })));
      mine.forEach((m, i) => {
        const fix = (ps: string[]) => execDirectories(`[${ps.join(', ')}]`).sort();
        expect(fix(m.inputs)).toEqual(fix(theirs[i]!.inputs.filter((p) => !bazelOnlyInput(p))));
      });
    }
  });

  it('Bazel 2.1.0 agrees on the configured targets, the rule as BUILD text and the action', async () => {
    const ws = workspace();
    const deps = await ws.kiln(['cquery', 'deps(//pkg:fg)', '--noimplicit_deps']);
    expect(roles(deps.stdout)).toEqual(roles(recorded('cquery-deps-noimplicit.txt', 'bazel-2.1.0')));
    // 2.1.0 prints no `instantiated at` lines (present-day Bazel and 4.2.3 do).
    const build = await ws.kiln(['cquery', '//pkg:gen', '--output=build', '-c', 'opt']);
    const withoutStack = build.stdout.replace(/# Rule gen instantiated at[^\n]*\n#[^\n]*\n/, '');
    expect(withoutStack.split(ws.root).join('ROOT')).toBe(recorded('cquery-build-opt.txt', 'bazel-2.1.0').split(RECORDED_ROOT).join('ROOT'));
    const action = await ws.kiln(['aquery', '//pkg:gen']);
    const [mine] = actionFields(action.stdout);
    const [theirs] = actionFields(recorded('aquery-gen.txt', 'bazel-2.1.0'));
    expect({ ...mine, inputs: '' }).toEqual({ ...theirs, inputs: '' });
  });

  it('an aquery filter that matches nothing prints nothing and succeeds', async () => {
    const run = await workspace().kiln(['aquery', 'mnemonic("Nothing", //pkg:gen)']);
    expect(run).toMatchObject({ code: 0, stdout: recorded('aquery-none.txt') });
  });
});
