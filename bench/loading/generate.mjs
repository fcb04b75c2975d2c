#!/usr/bin/env node
// Deterministic workspace generator for the loading benchmark: N packages of ~10 rules each, with
// macros loaded from shared .bzl files, globs and selects. Valid for Bazel 2.1.0 and Kiln alike.
//
//   node bench/loading/generate.mjs DIR PACKAGES
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

function write(root, path, text) {
  const full = join(root, path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, text);
}

const MACROS = `load(":settings.bzl", "SUFFIX", "copts_for")

def lib_with_gen(name, srcs, deps = []):
    native.genrule(
        name = name + "_gen",
        srcs = srcs,
        outs = [name + SUFFIX],
        cmd = "cat $(SRCS) > $@",
    )
    native.filegroup(
        name = name + "_files",
        srcs = srcs + [":" + name + "_gen"],
    )
    native.sh_library(
        name = name,
        srcs = [":" + name + "_files"],
        deps = deps,
        data = copts_for(name),
    )
`;

const SETTINGS = `SUFFIX = ".out"

def copts_for(name):
    return select({
        "//tools:opt": [],
        "//conditions:default": [],
    })
`;

export function generateWorkspace(root, packages) {
  write(root, 'WORKSPACE', 'workspace(name = "bench")\n');
  write(root, 'tools/BUILD', 'config_setting(name = "opt", values = {"compilation_mode": "opt"})\n\nexports_files(["macros.bzl", "settings.bzl"])\n');
  write(root, 'tools/macros.bzl', MACROS);
  write(root, 'tools/settings.bzl', SETTINGS);
  for (let i = 0; i < packages; i++) {
    const dir = `p${String(Math.floor(i / 100)).padStart(2, '0')}/pkg${String(i).padStart(5, '0')}`;
    const dep = i > 0 ? `"//p${String(Math.floor((i - 1) / 100)).padStart(2, '0')}/pkg${String(i - 1).padStart(5, '0')}:core"` : '';
    write(
      root,
      `${dir}/BUILD`,
      `load("//tools:macros.bzl", "lib_with_gen")

lib_with_gen(
    name = "core",
    srcs = ["a.txt", "b.txt"],
    deps = [${dep}],
)

lib_with_gen(
    name = "extra",
    srcs = glob(["data/*.txt"]),
)

filegroup(
    name = "all_txt",
    srcs = glob(["**/*.txt"], exclude = ["b.txt"]),
)

genrule(
    name = "stamp",
    outs = ["stamp.txt"],
    cmd = select({
        "//tools:opt": "echo opt > $@",
        "//conditions:default": "echo dbg > $@",
    }),
)

sh_binary(
    name = "tool",
    srcs = ["run.sh"],
    deps = [":core"],
)

sh_test(
    name = "tool_test",
    size = "small",
    srcs = ["run.sh"],
    data = [":stamp"],
)
`,
    );
    write(root, `${dir}/a.txt`, `a ${i}\n`);
    write(root, `${dir}/b.txt`, `b ${i}\n`);
    write(root, `${dir}/run.sh`, '#!/bin/sh\nexit 0\n');
    write(root, `${dir}/data/c.txt`, `c ${i}\n`);
    write(root, `${dir}/data/d.txt`, `d ${i}\n`);
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const [dir, n] = process.argv.slice(2);
  if (!dir || !n) {
    console.error('usage: node bench/loading/generate.mjs DIR PACKAGES');
    process.exit(2);
  }
  generateWorkspace(dir, Number(n));
}
