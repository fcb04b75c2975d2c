Info = provider(fields = ["value"])

def _setting_impl(ctx):
    print("setting %s = %r" % (ctx.label, ctx.build_setting_value))
    return [Info(value = ctx.build_setting_value)]

my_string = rule(implementation = _setting_impl, build_setting = config.string(flag = True))
my_bool = rule(implementation = _setting_impl, build_setting = config.bool(flag = True))
my_int = rule(implementation = _setting_impl, build_setting = config.int(flag = True))
my_list = rule(implementation = _setting_impl, build_setting = config.string_list(flag = True))
my_fixed = rule(implementation = _setting_impl, build_setting = config.string())

def _show_impl(ctx):
    for d in ctx.attr.settings:
        print("show %s %r" % (d.label, d[Info].value))
    out = ctx.actions.declare_file(ctx.label.name + ".txt")
    ctx.actions.write(out, ctx.attr.text + "\n")
    return [DefaultInfo(files = depset([out]))]

show = rule(implementation = _show_impl, attrs = {"settings": attr.label_list(), "text": attr.string()})
