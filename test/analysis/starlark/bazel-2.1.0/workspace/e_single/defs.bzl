def _impl(ctx):
    return []
r = rule(implementation = _impl, attrs = {"one": attr.label(allow_single_file = True)})
