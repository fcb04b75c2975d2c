import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace, tempDir } from './e2e-workspace.js';

/**
 * Incremental analysis against a clean build (issue 31's correctness point): a small workspace is
 * edited at random — comments that move targets or not, a genrule's `cmd`, targets and packages
 * added and removed, a macro's load added and dropped, the macro's `.bzl` edited, a select branch and
 * the `--define` it reads changed, a deprecation warning — and after every edit the build in a kept
 * output base must equal a build in a fresh one: exit code, errors and warnings, the analysis count,
 * the action count, and every output the clean build made, byte for byte. The Starlark rule applies an
 * aspect through the filegroups to the genrules, so aspect applications are edited too.
 */

interface Genrule {
  name: string;
  cmd: string;
  /** A label whose output this genrule reads, if any. */
  src?: string;
  deprecated?: boolean;
  /** The cmd is `select`ed on //conf:on. */
  selected?: boolean;
}

interface Pkg {
  genrules: Genrule[];
  /** Comment lines above the targets (they move every target's line). */
  headComments: number;
  tailComments: number;
  /** Calls the macro of //defs:defs.bzl. */
  usesMacro: boolean;
  /** The package whose `:all` filegroup this one's `:all` includes: a value that changes without this package changing. */
  allFrom?: string;
}

interface Model {
  packages: Map<string, Pkg>;
  macroWord: string;
  starlarkWord: string;
  define: boolean;
}

function render(m: Model): Record<string, string> {
  const files: Record<string, string> = {
    WORKSPACE: 'workspace(name = "inc")\n',
    'conf/BUILD': 'config_setting(name = "on", define_values = {"mode": "on"}, visibility = ["//visibility:public"])\n',
    'defs/BUILD': '',
    'defs/defs.bzl': `def stamp(name):
    native.genrule(name = name, outs = [name + ".txt"], cmd = "echo ${m.macroWord} > $@")

CmdInfo = provider(fields = ["cmds"])

# An aspect through the filegroups to the genrules that make their files: what it collects changes
# with a cmd edit, a genrule added or removed, and the macro's .bzl.
def _cmd_impl(target, ctx):
    cmds = [ctx.rule.attr.cmd] if ctx.rule.kind == "genrule" else []
    for d in getattr(ctx.rule.attr, "srcs", []):
        if CmdInfo in d:
            cmds += d[CmdInfo].cmds
    return [CmdInfo(cmds = cmds)]

cmd_aspect = aspect(implementation = _cmd_impl, attr_aspects = ["srcs"], apply_to_generating_rules = True)

def _upper_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".up")
    ctx.actions.run_shell(inputs = ctx.files.srcs, outputs = [out], command = "cat $1 | tr a-z A-Z > $2 && echo ${m.starlarkWord} >> $2", arguments = [ctx.files.srcs[0].path, out.path])
    cmds = ctx.actions.declare_file(ctx.label.name + ".cmds")
    collected = []
    for d in ctx.attr.srcs:
        collected += d[CmdInfo].cmds if CmdInfo in d else []
    ctx.actions.write(cmds, "\\n".join(sorted(collected)) + "\\n")
    return [DefaultInfo(files = depset([out, cmds]))]

upper = rule(implementation = _upper_impl, attrs = {"srcs": attr.label_list(allow_files = True, aspects = [cmd_aspect])})
`,
  };
  for (const [name, p] of m.packages) {
    let text = '#\n'.repeat(p.headComments);
    if (p.usesMacro) text += 'load("//defs:defs.bzl", "stamp", "upper")\n\nstamp(name = "stamped")\n\nupper(name = "loud", srcs = [":stamped", ":all"])\n\n';
    for (const g of p.genrules) {
      const cmd = g.selected ? `select({"//conf:on": "echo on-${g.cmd} > $@", "//conditions:default": "echo ${g.cmd} > $@"})` : `"echo ${g.cmd} > $@"`;
      const src = g.src ? `    srcs = ["${g.src}"],\n` : '';
      const cmdWithSrc = g.src && !g.selected ? `"cat $< > $@ && echo ${g.cmd} >> $@"` : cmd;
      text += `genrule(\n    name = "${g.name}",\n${src}    outs = ["${g.name}.out"],\n    cmd = ${cmdWithSrc},\n${g.deprecated ? '    deprecation = "old",\n' : ''}    visibility = ["//visibility:public"],\n)\n\n`;
    }
    const all = [...p.genrules.map((g) => `":${g.name}.out"`), ...(p.allFrom && m.packages.has(p.allFrom) ? [`"//${p.allFrom}:all"`] : [])];
    text += `filegroup(name = "all", srcs = [${all.join(', ')}], visibility = ["//visibility:public"])\n\n`;
    text += 'genrule(name = "sum", srcs = [":all"], outs = ["sum.txt"], cmd = "cat $(SRCS) > $@")\n\n';
    text += '# end\n'.repeat(p.tailComments);
    files[`${name}/BUILD`] = text;
  }
  return files;
}

type Edit =
  | { kind: 'head-comment' | 'tail-comment' | 'toggle-macro' | 'add-genrule' | 'remove-genrule' | 'remove-package'; pkg: number }
  | { kind: 'cmd' | 'deprecate' | 'select'; pkg: number; rule: number; word: string }
  | { kind: 'add-package'; dependsOn: number }
  | { kind: 'macro-bzl' | 'starlark-bzl'; word: string }
  | { kind: 'define' };

const word = fc.constantFrom('alpha', 'beta', 'gamma', 'delta');
const index = fc.nat({ max: 7 });
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constantFrom('head-comment', 'tail-comment', 'toggle-macro', 'add-genrule', 'remove-genrule', 'remove-package' as const), pkg: index }),
  fc.record({ kind: fc.constantFrom('cmd', 'deprecate', 'select' as const), pkg: index, rule: index, word }),
  fc.record({ kind: fc.constant('add-package' as const), dependsOn: index }),
  fc.record({ kind: fc.constantFrom('macro-bzl', 'starlark-bzl' as const), word }),
  fc.record({ kind: fc.constant('define' as const) }),
) as fc.Arbitrary<Edit>;

let packageCounter = 0;

function apply(m: Model, e: Edit): void {
  const names = [...m.packages.keys()];
  const pick = (i: number) => (names.length === 0 ? undefined : m.packages.get(names[i % names.length]!));
  switch (e.kind) {
    case 'head-comment':
      if (pick(e.pkg)) pick(e.pkg)!.headComments++;
      return;
    case 'tail-comment':
      if (pick(e.pkg)) pick(e.pkg)!.tailComments++;
      return;
    case 'toggle-macro':
      if (pick(e.pkg)) pick(e.pkg)!.usesMacro = !pick(e.pkg)!.usesMacro;
      return;
    case 'add-genrule': {
      const p = pick(e.pkg);
      if (p) p.genrules.push({ name: `g${packageCounter++}`, cmd: 'new' });
      return;
    }
    case 'remove-genrule':
      pick(e.pkg)?.genrules.pop(); // dependents in other packages now fail: their errors are compared too
      return;
    case 'remove-package':
      if (names.length > 1) m.packages.delete(names[e.pkg % names.length]!);
      return;
    case 'cmd':
    case 'deprecate':
    case 'select': {
      const p = pick(e.pkg);
      const g = p?.genrules[e.rule % Math.max(1, p.genrules.length)];
      if (!g) return;
      if (e.kind === 'cmd') g.cmd = e.word;
      else if (e.kind === 'deprecate') g.deprecated = !g.deprecated;
      else g.selected = !g.selected;
      return;
    }
    case 'add-package': {
      const target = names.length === 0 ? undefined : names[e.dependsOn % names.length]!;
      const dep = target ? m.packages.get(target)!.genrules[0] : undefined;
      m.packages.set(`p${packageCounter++}`, {
        genrules: [{ name: 'first', cmd: 'added', ...(dep ? { src: `//${target}:${dep.name}.out` } : {}) }],
        headComments: 0,
        tailComments: 0,
        usesMacro: false,
        ...(target ? { allFrom: target } : {}),
      });
      return;
    }
    case 'macro-bzl':
      m.macroWord = e.word;
      return;
    case 'starlark-bzl':
      m.starlarkWord = e.word;
      return;
    case 'define':
      m.define = !m.define;
      return;
  }
}

/** Every output file of the build in `outputBase`, by path below bazel-out. */
function outputsIn(outputBase: string): Map<string, string> {
  const out = new Map<string, string>();
  const execroot = join(outputBase, 'execroot');
  if (!existsSync(execroot)) return out;
  for (const ws of readdirSync(execroot)) {
    const root = join(execroot, ws, 'bazel-out');
    if (!existsSync(root)) continue;
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const full = join(dir, name);
        if (statSync(full).isDirectory()) walk(full);
        else if (!full.includes('/testlogs/')) out.set(relative(root, full), readFileSync(full, 'utf8'));
      }
    };
    walk(root);
  }
  return out;
}

/** What both builds must say alike: errors, warnings, the analysis count, the action total. */
function verdict(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((l) => /^(ERROR|WARNING):/.test(l) || /^INFO: (Analyzed|Build completed)/.test(l) || /^FAILED:/.test(l))
    .map((l) => l.replace(/\(\d+ packages? loaded, \d+ targets?( and \d+ aspects?)? configured\)/, '(...)'));
}

function initialModel(): Model {
  return {
    packages: new Map([
      [
        'a',
        {
          genrules: [
            { name: 'one', cmd: 'one' },
            { name: 'two', cmd: 'two', src: ':one.out' },
          ],
          headComments: 0,
          tailComments: 0,
          usesMacro: true,
        },
      ],
      [
        'b',
        { genrules: [{ name: 'three', cmd: 'three', src: '//a:two.out', selected: true }], headComments: 0, tailComments: 0, usesMacro: false, allFrom: 'a' },
      ],
      [
        'c',
        { genrules: [{ name: 'four', cmd: 'four', src: '//b:three.out', deprecated: true }], headComments: 1, tailComments: 0, usesMacro: false, allFrom: 'b' },
      ],
    ]),
    macroWord: 'macro',
    starlarkWord: 'rule',
    define: false,
  };
}

describe('incremental analysis equals a clean build', () => {
  it('after every random edit of BUILD and .bzl files and options', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(editArb, { minLength: 4, maxLength: 7 }), async (edits) => {
        const model = initialModel();
        const ws = new E2eWorkspace(render(model));
        const kept = tempDir();
        const flags = () => ['build', '--keep_going', '--spawn_strategy=local', ...(model.define ? ['--define=mode=on'] : [])];
        expect((await ws.kiln([...flags(), `--output_base=${kept}`, '//...'])).code).toBe(0);
        for (const edit of edits) {
          apply(model, edit);
          for (const path of ['a', 'b', 'c', ...[...Array(packageCounter).keys()].map((i) => `p${i}`)]) {
            if (!model.packages.has(path)) rmSync(join(ws.root, path), { recursive: true, force: true });
          }
          ws.write(render(model));
          const incremental = await ws.kiln([...flags(), `--output_base=${kept}`, '//...']);
          const fresh = tempDir();
          const clean = await ws.kiln([...flags(), `--output_base=${fresh}`, '//...']);
          const context = `after ${JSON.stringify(edit)}\n--- incremental:\n${incremental.stderr}\n--- clean:\n${clean.stderr}`;
          expect(incremental.code, context).toBe(clean.code);
          expect(verdict(incremental.stderr), context).toEqual(verdict(clean.stderr));
          const keptOutputs = outputsIn(kept);
          for (const [path, content] of outputsIn(fresh)) expect(keptOutputs.get(path), `${path} ${context}`).toBe(content);
          rmSync(fresh, { recursive: true, force: true });
        }
      }),
      { numRuns: 4 },
    );
  }, 300_000);
});

describe('incremental analysis re-analyses what an edit changed', () => {
  const configuredCount = (stderr: string) => Number(/(\d+) targets?(?: and \d+ aspects?)? configured/.exec(stderr)?.[1]);

  it('a comment that moves nothing re-analyses nothing; a cmd edit re-analyses the target and those whose inputs it changed', async () => {
    const model = initialModel();
    const ws = new E2eWorkspace(render(model));
    const base = tempDir();
    const build = () => ws.kiln(['build', '--spawn_strategy=local', `--output_base=${base}`, '//...']);
    const first = await build();
    expect(first.code, first.stderr).toBe(0);
    const all = configuredCount(first.stderr);
    expect(all).toBeGreaterThan(15);

    model.packages.get('c')!.tailComments++; // after every target: the package's value is unchanged
    ws.write(render(model));
    const comment = await build();
    expect(comment.code).toBe(0);
    // The package's value is unchanged, so the whole build graph of the last build still holds.
    expect(comment.stderr).toMatch(/\(0 packages loaded, 0 targets configured\)/);

    model.packages.get('c')!.headComments++; // every target of c moves: c's targets, nothing else
    ws.write(render(model));
    const moved = await build();
    expect(configuredCount(moved.stderr)).toBeGreaterThan(0);
    expect(configuredCount(moved.stderr)).toBeLessThan(all / 2);

    // The leaf package c's genrule: c's targets again (and the Starlark rule), nothing of a or b.
    model.packages.get('c')!.genrules[0]!.cmd = 'changed';
    ws.write(render(model));
    const edited = await build();
    expect(edited.code, edited.stderr).toBe(0);
    expect(configuredCount(edited.stderr)).toBe(configuredCount(moved.stderr));
    expect(edited.executed).toEqual(['//c:four', '//c:sum']);
  });

  it('a truncated or corrupt store of configured targets is detected and rebuilt, never trusted', async () => {
    const model = initialModel();
    const ws = new E2eWorkspace(render(model));
    const base = tempDir();
    const build = () => ws.kiln(['build', '--spawn_strategy=local', `--output_base=${base}`, '//...']);
    expect((await build()).code).toBe(0);
    const store = join(base, 'analysis', 'configured.bin');
    const bytes = readFileSync(store);
    for (const damaged of [bytes.subarray(0, bytes.length >> 1), Buffer.from(bytes.map((b, i) => (i === bytes.length - 9 ? b ^ 0xff : b)))]) {
      writeFileSync(store, damaged);
      model.packages.get('a')!.genrules[0]!.cmd = `again${damaged.length}`;
      ws.write(render(model));
      const run = await build();
      expect(run.code, run.stderr).toBe(0);
      expect(outputsIn(base).get('k8-fastbuild/bin/a/one.out')).toBe(`again${damaged.length}\n`);
    }
  });
});
