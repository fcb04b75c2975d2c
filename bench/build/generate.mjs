#!/usr/bin/env node
// Deterministic workspace generator for the build benchmark: N packages of 11 genrules each with
// trivial commands (echo, cat, tr, wc), plus one shared tool genrule built in the exec configuration.
// Every package reads a source file, chains its genrules (one multi-output genrule among them), runs
// the shared tool, and reads one output of its group's first package, so a changed leaf reruns a
// short chain and its dependents. Valid for Bazel 2.1.0 (offline) and Kiln alike.
//
//   node bench/build/generate.mjs DIR PACKAGES
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Genrule actions per package (a tenth of the packages have one more, from the macro): PACKAGES * 11.1 + 2 in all (the tool twice). */
export const ACTIONS_PER_PACKAGE = 11;

function write(root, path, text) {
  const full = join(root, path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, text);
}

/** The package path of package `i`: 100 packages per top-level folder. */
export function packagePath(i) {
  return `g${String(Math.floor(i / 100)).padStart(2, '0')}/pkg${String(i).padStart(5, '0')}`;
}

/** The source file whose change the incremental benchmark makes. */
export function leafSource(i) {
  return `${packagePath(i)}/input.txt`;
}

const TOOLS_BUILD = `# The shared tool: a script produced by a genrule, so it is built in the exec configuration.
genrule(
    name = "shout",
    outs = ["shout.sh"],
    cmd = "printf '#!/bin/sh\\\\ntr a-z A-Z\\\\n' > $@",
    executable = True,
    visibility = ["//visibility:public"],
)
`;

function packageBuild(i) {
  // Each group of ten packages reads the first package of its group: shallow cross-package edges.
  const groupHead = packagePath(i - (i % 10));
  const neighbor = i % 10 === 0 ? '"copy.txt"' : `"//${groupHead}:copy.txt"`;
  return `genrule(
    name = "copy",
    srcs = ["input.txt"],
    outs = ["copy.txt"],
    cmd = "cat $< > $@",
    visibility = ["//visibility:public"],
)

genrule(
    name = "upper",
    srcs = [":copy"],
    outs = ["upper.txt"],
    cmd = "tr a-z A-Z < $< > $@",
)

genrule(
    name = "lower",
    srcs = [":upper"],
    outs = ["lower.txt"],
    cmd = "tr A-Z a-z < $< > $@",
)

genrule(
    name = "words",
    outs = ["words.txt"],
    cmd = "echo package ${i} words > $@",
)

genrule(
    name = "pair",
    srcs = ["input.txt"],
    outs = ["left.txt", "right.txt"],
    cmd = "echo left > $(location left.txt); cat $(location input.txt) > $(location right.txt)",
)

genrule(
    name = "joined",
    srcs = [":copy", ":upper", ":lower", ":words", ":pair"],
    outs = ["joined.txt"],
    cmd = "cat $(SRCS) > $@",
)

genrule(
    name = "shouted",
    srcs = [":joined"],
    outs = ["shouted.txt"],
    cmd = "$(location //tools:shout) < $< > $@",
    tools = ["//tools:shout"],
)

genrule(
    name = "count",
    srcs = [":joined"],
    outs = ["count.txt"],
    cmd = "wc -c < $< > $@",
)

genrule(
    name = "squeezed",
    srcs = ["right.txt"],
    outs = ["squeezed.txt"],
    cmd = "tr -d ' ' < $< > $@",
)

genrule(
    name = "neighbor",
    srcs = [${neighbor}, ":lower"],
    outs = ["neighbor.txt"],
    cmd = "cat $(SRCS) > $@",
)

genrule(
    name = "final",
    srcs = [":shouted", ":count", ":squeezed", ":neighbor"],
    outs = ["final.txt"],
    cmd = "cat $(SRCS) > $@",
)

filegroup(
    name = "all",
    srcs = [":final", ":pair"],
)
`;
}

/** The macro a tenth of the packages load (bench/build/edits.mjs edits it); `word` is what its genrule says. */
export function macroBzl(word) {
  return `def stamp(name):\n    native.genrule(name = name, outs = [name + ".txt"], cmd = "echo ${word} > $@")\n`;
}

/** The actions of a build of the whole workspace: the genrules, the macro's in every tenth package, the tool twice (target and exec). */
export function actionCount(packages) {
  return packages * ACTIONS_PER_PACKAGE + Math.ceil(packages / 10) + 2;
}

/** Packages that load //tools:macros.bzl: every tenth. */
export const loadsMacro = (i) => i % 10 === 0;

export function generateWorkspace(root, packages) {
  write(root, 'WORKSPACE', 'workspace(name = "build_bench")\n');
  write(root, 'tools/BUILD', TOOLS_BUILD);
  write(root, 'tools/macros.bzl', macroBzl('stamped'));
  for (let i = 0; i < packages; i++) {
    const macro = loadsMacro(i) ? 'load("//tools:macros.bzl", "stamp")\n\nstamp(name = "stamp")\n\n' : '';
    write(root, `${packagePath(i)}/BUILD`, macro + packageBuild(i));
    write(root, leafSource(i), `input of package ${i}\n`);
  }
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const [dir, n] = process.argv.slice(2);
  if (!dir || !n) {
    console.error('usage: node bench/build/generate.mjs DIR PACKAGES');
    process.exit(2);
  }
  generateWorkspace(dir, Number(n));
}
