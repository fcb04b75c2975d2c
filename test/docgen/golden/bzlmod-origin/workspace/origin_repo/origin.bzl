def my_macro():
    pass

MyInfo = provider()
my_rule = rule(
    implementation = lambda ctx: None,
    attrs = {"a": attr.label(providers = [MyInfo])},
    provides = [MyInfo],
)
my_aspect = aspect(implementation = lambda target, ctx: None)
