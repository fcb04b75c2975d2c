def _impl(ctx):
    return "nope"
r = rule(implementation = _impl)
