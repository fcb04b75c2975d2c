def _impl(ctx):
    out = ctx.actions.declare_file("twice.txt")
    ctx.actions.write(out, "1")
    ctx.actions.write(out, "2")
    return [DefaultInfo(files = depset([out]))]
r = rule(implementation = _impl)
