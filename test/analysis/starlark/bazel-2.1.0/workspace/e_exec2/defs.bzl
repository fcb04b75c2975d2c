def _impl(ctx):
    return []
r = rule(implementation = _impl, attrs = {"tool": attr.label(executable = True, cfg = "host")})
