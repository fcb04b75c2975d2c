'''This is my module'''
load("syntax_error.bzl", "x")
