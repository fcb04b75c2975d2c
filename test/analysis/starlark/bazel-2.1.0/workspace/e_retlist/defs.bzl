def _impl(ctx):
    return [DefaultInfo(), 3]
r = rule(implementation = _impl)
