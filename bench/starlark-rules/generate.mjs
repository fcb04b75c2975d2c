#!/usr/bin/env node
// The build benchmark's workspace (bench/build/generate.mjs) with every genrule replaced by a
// Starlark rule that registers the same command with ctx.actions.run_shell: `sh_action` for the
// genrules, `sh_tool` for the shared executable tool. The commands are the genrules' with `$<`,
// `$@`, `$(SRCS)` and `$(location ...)` substituted by the rule itself, so the actions match the
// genrule version one for one (the tool adds `chmod +x`, which genrule's `executable` does for it).
// Valid for Bazel 2.1.0 (offline) and Kiln alike.
//
//   node bench/starlark-rules/generate.mjs DIR PACKAGES
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateWorkspace as generateGenruleWorkspace } from '../build/generate.mjs';

export { ACTIONS_PER_PACKAGE, leafSource } from '../build/generate.mjs';

const RULES_BZL = `"""Genrule-like Starlark rules: one run_shell action each."""

def _command(ctx, outs):
    srcs = ctx.files.srcs
    cmd = ctx.attr.cmd
    if "$(SRCS)" in cmd:
        cmd = cmd.replace("$(SRCS)", " ".join([f.path for f in srcs]))
    if srcs and "$<" in cmd:
        cmd = cmd.replace("$<", srcs[0].path)
    cmd = cmd.replace("$@", outs[0].path)
    if "$(location" not in cmd:
        return cmd
    for out in outs:
        cmd = cmd.replace("$(location %s)" % out.short_path[len(ctx.label.package) + 1:], out.path)
    return ctx.expand_location(cmd, ctx.attr.srcs + ctx.attr.tools)

def _sh_action_impl(ctx):
    outs = ctx.outputs.outs
    ctx.actions.run_shell(
        outputs = outs,
        inputs = ctx.files.srcs,
        tools = ctx.files.tools,
        command = _command(ctx, outs),
        mnemonic = "ShAction",
        progress_message = "Running %s" % ctx.label,
    )
    return [DefaultInfo(files = depset(outs))]

_ATTRS = {
    "srcs": attr.label_list(allow_files = True),
    "tools": attr.label_list(allow_files = True, cfg = "host"),
    "cmd": attr.string(mandatory = True),
}

sh_action = rule(
    implementation = _sh_action_impl,
    attrs = dict(_ATTRS, outs = attr.output_list(mandatory = True)),
)

def _sh_tool_impl(ctx):
    out = ctx.outputs.out
    ctx.actions.run_shell(
        outputs = [out],
        inputs = ctx.files.srcs,
        command = _command(ctx, [out]) + " && chmod +x " + out.path,
        mnemonic = "ShAction",
        progress_message = "Running %s" % ctx.label,
    )
    return [DefaultInfo(files = depset([out]), executable = out)]

sh_tool = rule(
    implementation = _sh_tool_impl,
    executable = True,
    attrs = dict(_ATTRS, out = attr.output(mandatory = True)),
)
`;

/** The genrule BUILD file of the build benchmark, as Starlark rule calls. */
function starlarkBuild(text) {
  const converted = text
    // The executable tool: one output, `out`.
    .replace(/genrule\(\n(\s+)name = "shout",\n\s+outs = \["shout\.sh"\],/, 'sh_tool(\n$1name = "shout",\n$1out = "shout.sh",')
    .replace(/\n\s+executable = True,/g, '')
    .replace(/\bgenrule\(/g, 'sh_action(');
  const rules = [...new Set([...converted.matchAll(/\b(sh_action|sh_tool)\(/g)].map((m) => m[1]))].sort();
  return `load("//rules:defs.bzl", ${rules.map((r) => `"${r}"`).join(', ')})\n\n${converted}`;
}

function convertTree(root, dir = root) {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) convertTree(root, full);
    else if (name === 'BUILD') writeFileSync(full, starlarkBuild(readFileSync(full, 'utf8')));
  }
}

export function generateWorkspace(root, packages) {
  generateGenruleWorkspace(root, packages);
  convertTree(root);
  mkdirSync(join(root, 'rules'), { recursive: true });
  writeFileSync(join(root, 'rules', 'BUILD'), '');
  writeFileSync(join(root, 'rules', 'defs.bzl'), RULES_BZL);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const [dir, n] = process.argv.slice(2);
  if (!dir || !n) {
    console.error('usage: node bench/starlark-rules/generate.mjs DIR PACKAGES');
    process.exit(2);
  }
  generateWorkspace(dir, Number(n));
}
