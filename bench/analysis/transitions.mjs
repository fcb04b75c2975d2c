#!/usr/bin/env node
// Toolchain and transition benchmark (#33): analysis of N packages in three versions, measured in
// one run, the versions alternated, medians reported with the machine's load:
//   genrule     the same graph of genrules;
//   starlark    Starlark rules, every one resolving a registered toolchain (ctx.toolchains);
//   twisted     as starlark, and one target in ten reaching its dependency through an outgoing
//               transition (a build setting changed: a configuration of its own, `k8-fastbuild-ST-<hash>`).
// Kiln cold each time (`kiln build --nobuild //...`, new process, empty output base).
//
//   node bench/analysis/transitions.mjs [--sizes=1000] [--runs=5]
// Needs `npm run build` first.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const DEFS = (withTransition) => `
load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")

def _echo_toolchain_impl(ctx):
    return [platform_common.ToolchainInfo(prefix = ctx.attr.prefix)]

echo_toolchain = rule(implementation = _echo_toolchain_impl, attrs = {"prefix": attr.string()})

def _flavor_impl(settings, attr):
    return {"//flags:flavor": "chocolate"}

flavor = transition(implementation = _flavor_impl, inputs = [], outputs = ["//flags:flavor"])

def _step_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    deps = [f for d in ctx.attr.deps for f in d[DefaultInfo].files.to_list()]
    prefix = ctx.toolchains["//tc:echo"].prefix
    ctx.actions.run_shell(outputs = [out], inputs = deps, command = "echo %s %s > %s" % (prefix, ctx.attr._flavor[BuildSettingInfo].value, out.path))
    return [DefaultInfo(files = depset([out]))]

step = rule(implementation = _step_impl, toolchains = ["//tc:echo"], attrs = {
    "deps": attr.label_list(),
    "_flavor": attr.label(default = "//flags:flavor"),
})

twisted_step = rule(implementation = _step_impl, toolchains = ["//tc:echo"], attrs = {
    "deps": attr.label_list(${withTransition ? 'cfg = flavor' : ''}),
    "_flavor": attr.label(default = "//flags:flavor"),
})
`;

function writer(root) {
  return (path, text) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
}

/** The genrule version of the same graph: a chain of packages, each with a lib and a leaf. */
function generateGenrules(root, size) {
  const write = writer(root);
  write('WORKSPACE', 'workspace(name = "bench")\n');
  for (let i = 0; i < size; i++) {
    const dep = i > 0 ? `"//p${i - 1}:lib"` : '';
    write(
      `p${i}/BUILD`,
      `genrule(name = "lib", srcs = [${dep}], outs = ["lib.txt"], cmd = "echo plain > $@", visibility = ["//visibility:public"])\ngenrule(name = "leaf", outs = ["leaf.txt"], cmd = "echo plain > $@")\n`,
    );
  }
}

function generate(root, size, withTransition) {
  const write = writer(root);
  write('WORKSPACE', 'workspace(name = "bench")\nregister_toolchains("//tc:all")\n');
  write(
    'tc/BUILD',
    [
      'load("//rules:defs.bzl", "echo_toolchain")',
      'toolchain_type(name = "echo", visibility = ["//visibility:public"])',
      'echo_toolchain(name = "impl", prefix = "tc")',
      'toolchain(name = "echo_tc", toolchain_type = ":echo", toolchain = ":impl")',
      '',
    ].join('\n'),
  );
  write(
    'flags/BUILD',
    'load("@bazel_skylib//rules:common_settings.bzl", "string_flag")\nstring_flag(name = "flavor", build_setting_default = "plain", visibility = ["//visibility:public"])\n',
  );
  write('rules/BUILD', '');
  write('rules/defs.bzl', DEFS(withTransition));
  for (let i = 0; i < size; i++) {
    const dep = i > 0 ? `"//p${i - 1}:lib"` : '';
    const kind = i % 10 === 9 ? 'twisted_step' : 'step';
    write(
      `p${i}/BUILD`,
      `load("//rules:defs.bzl", "step", "twisted_step")\n${kind}(name = "lib", deps = [${dep}], visibility = ["//visibility:public"])\nstep(name = "leaf")\n`,
    );
  }
}

function kilnColdMs(ws, dir) {
  const start = process.hrtime.bigint();
  const r = spawnSync(join(REPO, 'bin/kiln'), ['build', `--output_base=${join(dir, `ob-${Math.random()}`)}`, '--nobuild', '//...'], {
    cwd: ws,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`kiln exited ${r.status}:\n${r.stderr}`);
  const configured = /(\d+) targets? configured/.exec(r.stderr)?.[1];
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, configured };
}

const flags = { sizes: [1000], runs: 5 };
for (const a of process.argv.slice(2)) {
  const m = /^--(sizes|runs)=(.+)$/.exec(a);
  if (!m) throw new Error(`unknown argument ${a}`);
  flags[m[1]] = m[1] === 'sizes' ? m[2].split(',').map(Number) : Number(m[2]);
}
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
for (const size of flags.sizes) {
  const dir = mkdtempSync(join(tmpdir(), `kiln-bench-transitions-${size}-`));
  try {
    const versions = { genrule: join(dir, 'genrule'), starlark: join(dir, 'starlark'), twisted: join(dir, 'twisted') };
    generateGenrules(versions.genrule, size);
    generate(versions.starlark, size, false);
    generate(versions.twisted, size, true);
    const times = { genrule: [], starlark: [], twisted: [] };
    const configured = {};
    const loads = [];
    // Alternated: one run of each version per round, so a change of the machine's load hits all alike.
    for (let i = 0; i < flags.runs; i++) {
      for (const [name, ws] of Object.entries(versions)) {
        loads.push(loadavg()[0]);
        const r = kilnColdMs(ws, dir);
        times[name].push(r.ms);
        configured[name] = r.configured;
      }
    }
    const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
    const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
    console.log(
      `${size} packages, median of ${flags.runs} alternated cold runs (load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)} on ${availableParallelism()} CPUs):\n` +
        `  genrule ${s(m.genrule)} (${configured.genrule} configured)\n` +
        `  starlark + toolchain ${s(m.starlark)} (${configured.starlark} configured), ${(m.starlark / m.genrule).toFixed(2)}x genrule\n` +
        `  starlark + toolchain + 1 in 10 transitioned ${s(m.twisted)} (${configured.twisted} configured), ${(m.twisted / m.genrule).toFixed(2)}x genrule (goal <= 1.5)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
