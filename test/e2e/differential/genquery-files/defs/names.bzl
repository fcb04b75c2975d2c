load(":base.bzl", "BASE")

NAMES = BASE + ["mid"]
