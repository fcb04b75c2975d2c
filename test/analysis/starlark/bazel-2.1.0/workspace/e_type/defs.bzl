def _impl(ctx):
    ctx.actions.write(output = "x.txt", content = "y")
    return []
r = rule(implementation = _impl)
