def func1():
    pass

def func2():
    pass

def _hidden():
    pass

FooInfo = provider(doc = "Named by a rule even when not wanted.")

foo_rule = rule(implementation = lambda ctx: None, attrs = {"dep": attr.label(providers = [FooInfo])})

outer = struct(
    inner = struct(
        deep = func1,
        _private = func2,
    ),
    other = func2,
)

_private_struct = struct(f = func1)
