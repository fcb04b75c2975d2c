def _impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".sh")
    ctx.actions.symlink(output = out, target_file = ctx.file.src, is_executable = True)
    return [DefaultInfo(executable = out, runfiles = ctx.runfiles(files = ctx.files.data + [ctx.file.src]))]

starlark_test = rule(
    implementation = _impl,
    test = True,
    attrs = {
        "src": attr.label(allow_single_file = True),
        "data": attr.label_list(allow_files = True),
    },
)
