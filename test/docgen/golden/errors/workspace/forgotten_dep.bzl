load("//:forgotten_dep_of_forgotten_dep.bzl", "j")

def h():
    pass
