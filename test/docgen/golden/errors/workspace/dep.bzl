load("//:forgotten_dep_of_dep.bzl", "g")

def f():
    pass
