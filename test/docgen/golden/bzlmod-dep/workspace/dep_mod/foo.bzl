def my_macro(arg = Label("//target:target")):
    pass

my_rule = rule(
    implementation = lambda ctx: None,
    attrs = {"a": attr.label(default = "//target:target")},
)
