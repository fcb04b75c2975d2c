P = provider(fields = ["a"])
def _dep(ctx):
    return [P(a = 1)]
dep = rule(implementation = _dep)
def _impl(ctx):
    return [DefaultInfo(files = depset([])), P(a = ctx.attr.d[P].nope)]
r = rule(implementation = _impl, attrs = {"d": attr.label()})
