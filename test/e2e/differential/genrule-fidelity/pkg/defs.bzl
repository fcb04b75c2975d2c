# ctx.expand_location quotes and sorts like $(location) in genrules.
def _impl(ctx):
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.write(out, ctx.expand_location("$(locations :fg) | $(location e'q.txt) | $(rootpaths :fg)", ctx.attr.deps) + "\n")
    return [DefaultInfo(files = depset([out]))]
expand = rule(implementation = _impl, attrs = {"deps": attr.label_list(allow_files = True)})
