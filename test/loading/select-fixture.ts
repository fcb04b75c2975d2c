/**
 * Package //p, whose BUILD file joins selects every way: list + select, select + list, select +
 * select, strings, through a macro, and one with no_match_error and no default. The tests that use
 * it (loading, query, analysis) record what Bazel 2.1.0 gave for the same workspace.
 */
export const SELECT_WORKSPACE: Readonly<Record<string, string>> = {
  WORKSPACE: '',
  'p/defs.bzl': 'def passthrough(name, srcs):\n    native.filegroup(name = name, srcs = srcs)\n',
  'p/BUILD': `load(":defs.bzl", "passthrough")

config_setting(name = "opt", values = {"compilation_mode": "opt"})

OPT = select({":opt": ["o.txt"], "//conditions:default": ["d.txt"]})

filegroup(name = "left", srcs = ["a.txt"] + OPT)

filegroup(name = "right", srcs = OPT + ["b.txt"])

filegroup(name = "both", srcs = ["a.txt"] + OPT + select({":opt": ["c.txt"], "//conditions:default": []}) + ["b.txt"])

passthrough(name = "macro", srcs = OPT + ["m.txt"])

genrule(name = "g", outs = ["g.out"], cmd = "echo " + select({":opt": "o", "//conditions:default": "d"}, no_match_error = "nope") + " > $@")

filegroup(name = "nm", srcs = ["a.txt"] + select({":opt": ["o.txt"]}, no_match_error = "build with -c opt"))
`,
  ...Object.fromEntries(['a', 'b', 'c', 'd', 'o', 'm'].map((n) => [`p/${n}.txt`, ''])),
};
