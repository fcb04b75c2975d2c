MyInfo = provider(fields = ["value", "files"])
Plain = provider()

def _show(d, order):
    print("depset %s %s" % (order, d.to_list()))

def _orders():
    for order in ["default", "postorder", "preorder", "topological"]:
        a = depset(["a"], order = order)
        b = depset(["b"], transitive = [a], order = order)
        c = depset(["c"], transitive = [a], order = order)
        d = depset(["d"], transitive = [b, c], order = order)
        _show(d, order)
        cd = depset(["c", "d"], order = order)
        gh = depset(["g", "h"], order = order)
        _show(depset(["a", "b", "e", "f"], transitive = [cd, gh], order = order), order)
    print("repr %r %r" % (depset([1, 2]), depset(["x"], order = "preorder")))
    print("struct %r %s" % (struct(b = 1, a = "x"), struct(c = [1]).c))
    print("provider %r" % MyInfo(value = 3))
    print("type %s %s %s" % (type(depset()), type(struct()), type(MyInfo)))

_orders()

def _impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    print("label %s %s %s %s" % (ctx.label, ctx.label.name, ctx.label.package, ctx.workspace_name))
    print("bin_dir %s genfiles %s" % (ctx.bin_dir.path, ctx.genfiles_dir.path))
    print("out path=%s short=%s base=%s dir=%s ext=%s root=%s src=%s owner=%s" % (out.path, out.short_path, out.basename, out.dirname, out.extension, out.root.path, out.is_source, out.owner))
    for f in ctx.files.srcs:
        print("src path=%s short=%s root=%r src=%s owner=%s" % (f.path, f.short_path, f.root.path, f.is_source, f.owner))
    if ctx.file.single:
        print("single %s" % ctx.file.single.path)
    if ctx.executable.tool:
        print("tool %s" % ctx.executable.tool.path)
    for d in ctx.attr.deps:
        print("dep %s files=%s" % (d.label, [f.short_path for f in d[DefaultInfo].files.to_list()]))
        if MyInfo in d:
            print("dep myinfo %s" % d[MyInfo].value)
    print("attrs %r %r %r %r" % (ctx.attr.s, ctx.attr.n, ctx.attr.b, ctx.attr.sl))
    args = ctx.actions.args()
    args.add("--out", out)
    args.add_all(ctx.files.srcs, before_each = "-i")
    args.add_joined(["x", "y"], join_with = ",")
    args.add_all(["a", "b"], format_each = "<%s>")
    args.add_all(["p", "p", "q"], uniquify = True)
    args.add_all([], omit_if_empty = True)
    ctx.actions.run_shell(
        outputs = [out],
        inputs = ctx.files.srcs,
        arguments = [args],
        command = "echo \"$@\" > %s" % out.path,
    )
    tmpl = ctx.actions.declare_file(ctx.label.name + ".tmpl.out")
    ctx.actions.expand_template(template = ctx.file.template, output = tmpl, substitutions = {"{NAME}": ctx.label.name, "{X}": "y"}) if ctx.file.template else ctx.actions.write(tmpl, "no template\n")
    w = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.write(w, "#!/bin/sh\necho hi\n", is_executable = True)
    og = ctx.actions.declare_file(ctx.label.name + ".extra")
    ctx.actions.write(og, "extra " + ctx.label.name + "\n")
    return [
        DefaultInfo(files = depset([out, tmpl]), executable = w),
        MyInfo(value = ctx.attr.s, files = depset([out])),
        OutputGroupInfo(extra = depset([og])),
    ]

my_rule = rule(
    implementation = _impl,
    executable = True,
    attrs = {
        "srcs": attr.label_list(allow_files = True),
        "single": attr.label(allow_single_file = True),
        "template": attr.label(allow_single_file = [".tpl"]),
        "tool": attr.label(executable = True, cfg = "host", allow_files = True),
        "deps": attr.label_list(),
        "s": attr.string(default = "dflt"),
        "n": attr.int(default = 7),
        "b": attr.bool(),
        "sl": attr.string_list(default = ["u"]),
    },
)
