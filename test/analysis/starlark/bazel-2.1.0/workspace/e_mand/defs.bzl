def _impl(ctx):
    return []
r = rule(implementation = _impl, attrs = {"src": attr.label(mandatory = True)})
