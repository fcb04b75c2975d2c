def my_macro():
    pass

MyInfo = provider()
MyOtherInfo = provider()
my_rule = rule(
    implementation = lambda ctx: None,
    attrs = {"a": attr.label(providers = [MyInfo, MyOtherInfo])},
    provides = [MyInfo, MyOtherInfo],
)
my_aspect = aspect(implementation = lambda target, ctx: None)

def return_nested():
    def nested(x):
        """My nested function"""
        pass

    return nested

def return_lambda():
    return lambda y: y
