def _impl(ctx):
    out = ctx.actions.declare_file("never.txt")
    return [DefaultInfo(files = depset([out]))]
r = rule(implementation = _impl)
