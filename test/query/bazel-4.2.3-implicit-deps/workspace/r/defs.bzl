def _impl(ctx):
    return []

gen = rule(implementation = _impl, attrs = {
    "srcs": attr.label_list(allow_files = True),
    "helper": attr.label(default = "//tools:other.sh", allow_single_file = True),
    "_tool": attr.label(default = "//tools:gen.sh", allow_single_file = True),
})
