def _impl(ctx):
    return []
r = rule(implementation = _impl, attrs = {"deps": attr.label_list(), "txt": attr.label_list(allow_files = [".txt"])})
