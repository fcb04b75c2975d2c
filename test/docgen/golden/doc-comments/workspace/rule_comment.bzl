def _impl(ctx):
    pass

#: Unexpected doc comment
my_rule = rule(implementation = _impl)
