def stamped(name, src):
    native.genrule(
        name = name,
        srcs = [src],
        outs = [name + ".out"],
        cmd = "cp $< $@",
    )
