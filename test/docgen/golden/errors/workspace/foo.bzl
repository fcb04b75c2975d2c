load("//:dep.bzl", "f")
load("//:forgotten_dep.bzl", "h")
load("//:forgotten_dep2.bzl", "i")
