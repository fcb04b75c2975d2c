#!/usr/bin/env node
// Transition benchmark: analysis of N packages of Starlark rules where one target in ten reaches
// its dependency through an outgoing transition (a build setting changed, so a configuration of
// its own, `k8-fastbuild-ST-<hash>`), against the same workspace without the transition, measured
// in one run. Kiln cold each time (`kiln build --nobuild //...`, new process, empty output base).
//
//   node bench/analysis/transitions.mjs [--sizes=1000] [--runs=3]
// Needs `npm run build` first.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const DEFS = (withTransition) => `
load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")

def _flavor_impl(settings, attr):
    return {"//flags:flavor": "chocolate"}

flavor = transition(implementation = _flavor_impl, inputs = [], outputs = ["//flags:flavor"])

def _step_impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    deps = [f for d in ctx.attr.deps for f in d[DefaultInfo].files.to_list()]
    ctx.actions.run_shell(outputs = [out], inputs = deps, command = "echo %s > %s" % (ctx.attr._flavor[BuildSettingInfo].value, out.path))
    return [DefaultInfo(files = depset([out]))]

step = rule(implementation = _step_impl, attrs = {
    "deps": attr.label_list(),
    "_flavor": attr.label(default = "//flags:flavor"),
})

twisted_step = rule(implementation = _step_impl, attrs = {
    "deps": attr.label_list(${withTransition ? 'cfg = flavor' : ''}),
    "_flavor": attr.label(default = "//flags:flavor"),
})
`;

function generate(root, size, withTransition) {
  const write = (path, text) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  write('WORKSPACE', 'workspace(name = "bench")\n');
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

const flags = { sizes: [1000], runs: 3 };
for (const a of process.argv.slice(2)) {
  const m = /^--(sizes|runs)=(.+)$/.exec(a);
  if (!m) throw new Error(`unknown argument ${a}`);
  flags[m[1]] = m[1] === 'sizes' ? m[2].split(',').map(Number) : Number(m[2]);
}
for (const size of flags.sizes) {
  const dir = mkdtempSync(join(tmpdir(), `kiln-bench-transitions-${size}-`));
  try {
    const plain = join(dir, 'plain');
    const twisted = join(dir, 'twisted');
    generate(plain, size, false);
    generate(twisted, size, true);
    const best = (ws) => {
      let out;
      for (let i = 0; i < flags.runs; i++) {
        const r = kilnColdMs(ws, dir);
        if (!out || r.ms < out.ms) out = r;
      }
      return out;
    };
    const a = best(plain);
    const b = best(twisted);
    console.log(
      `${size} packages: without transitions ${(a.ms / 1000).toFixed(2)} s (${a.configured} configured), with one in ten ${(b.ms / 1000).toFixed(2)} s (${b.configured} configured); ratio ${(b.ms / a.ms).toFixed(2)} (goal <= 1.5)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
