import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { needTool } from '../setup/need-tool.js';
import { E2eWorkspace } from './e2e-workspace.js';

const LOCAL = '--spawn_strategy=local';
const haveGcc = spawnSync('gcc', ['--version']).status === 0 && spawnSync('g++', ['--version']).status === 0;

const FILES = {
  WORKSPACE: 'workspace(name = "cc_ws")\n',
  'lib/BUILD': `
load("@rules_cc//cc:defs.bzl", "cc_library")
cc_library(
    name = "greet",
    srcs = ["greet.cc"],
    hdrs = ["greet.h"],
    defines = ["GREETING=\\\\\\"hello\\\\\\""],
    visibility = ["//visibility:public"],
)
`,
  'lib/greet.h': '#include <string>\nstd::string Greet(const std::string& who);\n',
  'lib/greet.cc': '#include "lib/greet.h"\nstd::string Greet(const std::string& who) { return std::string(GREETING) + ", " + who; }\n',
  'app/BUILD': `
load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_test")
cc_binary(
    name = "app",
    srcs = ["main.cc"],
    deps = ["//lib:greet", "@bazel_tools//tools/cpp/runfiles"],
    data = ["data.txt"],
)
cc_test(
    name = "app_test",
    srcs = ["test.c"],
    args = ["$(location data.txt)"],
    data = ["data.txt"],
)
`,
  'app/data.txt': 'from runfiles\n',
  'app/main.cc': `#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include "lib/greet.h"
#include "tools/cpp/runfiles/runfiles.h"
using bazel::tools::cpp::runfiles::Runfiles;
int main(int argc, char** argv) {
  std::string error;
  std::unique_ptr<Runfiles> runfiles(Runfiles::Create(argv[0], &error));
  if (!runfiles) { fprintf(stderr, "%s\\n", error.c_str()); return 1; }
  std::ifstream in(runfiles->Rlocation("cc_ws/app/data.txt").c_str());
  std::string line;
  std::getline(in, line);
  printf("%s: %s\\n", Greet("world").c_str(), line.c_str());
  return runfiles->Rlocation("cc_ws/../x").empty() ? 0 : 2;
}
`,
  'app/test.c':
    '#include <stdio.h>\n#include <string.h>\nint main(int argc, char** argv) { return argc == 2 && strcmp(argv[1], "app/data.txt") == 0 ? 0 : 1; }\n',
};

describe.skipIf(!needTool('gcc and g++', haveGcc, 'scripts/test-setup.d/05-c-compiler.sh and 50-bazel-rule-sets.sh install them'))(
  'cc_library, cc_binary, cc_test',
  () => {
    it('compile with the host compiler, link the dependencies archives, find runfiles through the C++ library, run as tests', async () => {
      const ws = new E2eWorkspace(FILES);
      const run = await ws.kiln(['run', LOCAL, '//app']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe('hello, world: from runfiles\n');
      const test = await ws.kiln(['test', LOCAL, '//app:app_test']);
      expect(test.code, test.stderr + test.stdout).toBe(0);
      expect(test.stdout).toMatch(/\/\/app:app_test\s+PASSED/);
      const q = await ws.kiln(['aquery', '--output=summary', 'deps(//app)']);
      expect(q.stdout).toMatch(/CppCompile: 3/);
      expect(q.stdout).toMatch(/CppArchive: 2/);
      expect(q.stdout).toMatch(/CppLink: 1/);
    });

    it('fails a target that sets an attribute Kiln does not honour, naming it', async () => {
      const ws = new E2eWorkspace({
        WORKSPACE: '',
        BUILD: 'cc_library(name = "l", srcs = ["l.c"], strip_include_prefix = "inc")\n',
        'l.c': 'int f(void) { return 1; }\n',
      });
      const run = await ws.kiln(['build', LOCAL, '//:l']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(
        "ERROR: BUILD:1:1: in strip_include_prefix attribute of cc_library rule //:l: the 'strip_include_prefix' attribute of cc_library is not supported by Kiln",
      );
    });
  },
);
