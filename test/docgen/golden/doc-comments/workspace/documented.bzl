"""Doc comments on globals."""

#: Exportable and documented
NAMES = ["foo", "bar"]

# Exportable but not documented
MORE_NAMES = ["baz", "qux"]

#: Ignored - non-exportable symbol
_PRIVATE_CONSTANT = 42

#: Struct
S = struct(answer = _PRIVATE_CONSTANT)

#: A multi-line doc comment:
#:   its second line is indented.
TABLE = {
    "a": 1,  # not a doc comment
    "b": "#: inside a string",
}

def f():
    #: A doc comment inside a function is attached to no global.
    x = 1
    return x
