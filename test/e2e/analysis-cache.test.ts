import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2eWorkspace } from './e2e-workspace.js';

// The build graph a command analysed is reused by the next command with the same command line
// while nothing its loading and analysis read has changed ("0 packages loaded" says it was reused).
const LOCAL = '--spawn_strategy=local';
const REUSED = /INFO: Analyzed \d+ targets? \(0 packages loaded, 0 targets configured\)\./;

const WORKSPACE = {
  WORKSPACE: '',
  BUILD: '',
  'defs.bzl': `
def shout(name, src):
    native.genrule(name = name, srcs = [src], outs = [name + ".txt"], cmd = "tr a-z A-Z < $< > $@")
`,
  'a/BUILD': `
load("//:defs.bzl", "shout")
shout("up", "in.txt")
genrule(name = "parts", srcs = glob(["parts/*.txt"]), outs = ["parts.txt"], cmd = "cat $(SRCS) > $@")
genrule(name = "uses_old", srcs = ["//b:old"], outs = ["uses_old.txt"], cmd = "cat $< > $@")
`,
  'a/in.txt': 'hello\n',
  'a/parts/1.txt': 'one\n',
  'b/BUILD': `
genrule(
    name = "old",
    outs = ["old.txt"],
    cmd = "echo old > $@",
    deprecation = "use //b:new",
    visibility = ["//visibility:public"],
)
`,
};

describe('the analysis cache', () => {
  it('reuses the build graph of an unchanged workspace, replaying its warnings; a source edit still reruns its action', async () => {
    const ws = new E2eWorkspace(WORKSPACE);
    const first = await ws.kiln(['build', LOCAL, '//...']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/INFO: Analyzed 4 targets \(\d+ packages loaded, \d+ targets configured\)\./);
    expect(first.stderr).not.toMatch(REUSED);
    const warning = "depends on deprecated target '//b:old': use //b:new";
    expect(first.stderr).toContain(warning);

    const second = await ws.kiln(['build', LOCAL, '//...']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(REUSED);
    expect(second.stderr).toContain(warning);
    expect(second.executed).toEqual([]);

    // Execution-only flags leave the graph alone.
    const moreJobs = await ws.kiln(['build', LOCAL, '--jobs=3', '--verbose_failures', '//...']);
    expect(moreJobs.stderr).toMatch(REUSED);

    ws.write({ 'a/in.txt': 'changed\n' });
    const edited = await ws.kiln(['build', LOCAL, '//...']);
    expect(edited.stderr).toMatch(REUSED);
    expect(edited.executed).toEqual(['//a:up']);
    expect(ws.read('kiln-bin/a/up.txt')).toBe('CHANGED\n');
  });

  it('analyzes again after a BUILD file, a loaded .bzl file, a globbed directory or the package set changes', async () => {
    const ws = new E2eWorkspace(WORKSPACE);
    expect((await ws.kiln(['build', LOCAL, '//...'])).code).toBe(0);

    ws.write({ 'a/BUILD': ws.read('a/BUILD').replace('cat $(SRCS) > $@', 'cat $(SRCS) $(SRCS) > $@') });
    const buildEdited = await ws.kiln(['build', LOCAL, '//...']);
    expect(buildEdited.stderr).not.toMatch(REUSED);
    expect(buildEdited.executed).toEqual(['//a:parts']);
    expect(ws.read('kiln-bin/a/parts.txt')).toBe('one\none\n');

    ws.write({ 'defs.bzl': WORKSPACE['defs.bzl'].replace('tr a-z A-Z < $< > $@', 'rev $< | tr a-z A-Z > $@') });
    const bzlEdited = await ws.kiln(['build', LOCAL, '//...']);
    expect(bzlEdited.stderr).not.toMatch(REUSED);
    expect(bzlEdited.executed).toEqual(['//a:up']);
    expect(ws.read('kiln-bin/a/up.txt')).toBe('OLLEH\n');

    ws.write({ 'a/parts/2.txt': 'two\n' });
    const globGrew = await ws.kiln(['build', LOCAL, '//...']);
    expect(globGrew.stderr).not.toMatch(REUSED);
    expect(ws.read('kiln-bin/a/parts.txt')).toBe('one\ntwo\none\ntwo\n');

    ws.write({ 'c/BUILD': 'genrule(name = "new", outs = ["new.txt"], cmd = "echo new > $@")\n' });
    const packageAdded = await ws.kiln(['build', LOCAL, '//...']);
    expect(packageAdded.stderr).not.toMatch(REUSED);
    expect(packageAdded.executed).toEqual(['//c:new']);
    expect((await ws.kiln(['build', LOCAL, '//...'])).stderr).toMatch(REUSED);
  });

  it('keys the graph by the options analysis reads and by the patterns, and never stores a failed analysis', async () => {
    const ws = new E2eWorkspace({
      ...WORKSPACE,
      'd/BUILD': `
config_setting(name = "loud", define_values = {"mode": "loud"})
genrule(name = "pick", outs = ["pick.txt"], cmd = select({":loud": "echo LOUD > $@", "//conditions:default": "echo quiet > $@"}))
genrule(name = "broken", srcs = ["//a:missing"], outs = ["broken.txt"], cmd = "cat $< > $@", tags = ["manual"])
`,
    });
    expect((await ws.kiln(['build', LOCAL, '//d:pick'])).code).toBe(0);
    expect(ws.read('kiln-bin/d/pick.txt')).toBe('quiet\n');
    const loud = await ws.kiln(['build', LOCAL, '--define=mode=loud', '//d:pick']);
    expect(loud.stderr).not.toMatch(REUSED);
    expect(ws.read('kiln-bin/d/pick.txt')).toBe('LOUD\n');
    const quietAgain = await ws.kiln(['build', LOCAL, '//d:pick']);
    expect(quietAgain.stderr).toMatch(REUSED);
    expect(ws.read('kiln-bin/d/pick.txt')).toBe('quiet\n');
    expect((await ws.kiln(['build', LOCAL, '//d:pick', '//a:up'])).stderr).not.toMatch(REUSED);

    for (let i = 0; i < 2; i++) {
      const broken = await ws.kiln(['build', LOCAL, '//d:broken']);
      expect(broken.code).toBe(1);
      expect(broken.stderr).toContain("no such target '//a:missing'");
      expect(broken.stderr).not.toMatch(REUSED);
    }
  });

  it('kiln run reuses the graph too, and the output base keeps a bounded number of graphs', async () => {
    const ws = new E2eWorkspace({
      WORKSPACE: '',
      'r/BUILD': 'genrule(name = "hi", outs = ["hi.sh"], cmd = "printf \'#!/bin/sh\\\\necho hi $$1\\\\n\' > $@", executable = True)\n',
    });
    for (let i = 0; i < 2; i++) {
      const run = await ws.kiln(['run', LOCAL, '//r:hi', '--', 'there']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe('hi there\n');
      if (i === 1) expect(run.stderr).toMatch(REUSED);
    }
    for (let i = 0; i < 10; i++) expect((await ws.kiln(['build', LOCAL, `--define=n=${i}`, '//r:hi'])).code).toBe(0);
    const info = await ws.kiln(['info', 'output_base']);
    expect(readdirSync(join(info.stdout.trim(), 'analysis')).filter((n) => n.endsWith('.v8'))).toHaveLength(3); // BuildGraphCache's MAX_ENTRIES
  });
});
