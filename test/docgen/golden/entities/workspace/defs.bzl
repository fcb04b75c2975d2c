"""Every kind of documented entity.

The module docstring's second paragraph.
"""

def _impl(ctx):
    pass

MyInfo = provider(
    doc = """A provider with documented fields.

    Its details.
    """,
    fields = {
        "a": "Field a.",
        "b": """Field b,
            on two lines.""",
        "_private": "Not documented.",
    },
)

ListInfo = provider(fields = ["x", "y"])

AnyInfo = provider("A provider with any fields.")

def _init_info(x, *, y = 2):
    """Makes an InitInfo.

    Args:
      x: The x.
      y: The y.
    """
    return {"x": x, "y": y}

InitInfo, _new_init_info = provider(doc = "A provider with init.", fields = ["x", "y"], init = _init_info)

my_library = rule(
    implementation = _impl,
    doc = "A library.",
    attrs = {"deps": attr.label_list(providers = [MyInfo])},
    provides = [MyInfo],
)

my_binary = rule(implementation = _impl, executable = True, doc = "A binary.")

my_test = rule(implementation = _impl, test = True)

def my_function(name, srcs = [], **kwargs):
    """Declares things."""
    my_library(name = name, **kwargs)

my_aspect = aspect(
    implementation = lambda target, ctx: None,
    doc = "An aspect.",
    attr_aspects = ["deps", "_private_dep"],
    attrs = {
        "mode": attr.string(values = ["a", "b"], default = "a", doc = "The mode."),
        "_tool": attr.label(default = "//:BUILD"),
    },
)

my_macro = macro(
    implementation = lambda name, visibility, srcs: None,
    doc = "A symbolic macro.",
    attrs = {"srcs": attr.label_list(doc = "Sources.")},
)

my_finalizer = macro(implementation = lambda name, visibility: None, finalizer = True)

my_repo_rule = repository_rule(
    implementation = lambda repository_ctx: None,
    doc = "A repository rule.",
    attrs = {"path": attr.string(mandatory = True), "_c": attr.string()},
    environ = ["HOME"],
)

_install = tag_class(
    doc = """Install

    With details""",
    attrs = {
        "artifacts": attr.string_list(doc = "Artifacts"),
        "_hidden": attr.bool(),
    },
)

_artifact = tag_class(
    attrs = {
        "group": attr.string(),
        "artifact": attr.string(default = "foo"),
    },
)

my_ext = module_extension(
    doc = """My extension

    With details""",
    tag_classes = {
        "install": _install,
        "artifact": _artifact,
    },
    implementation = lambda module_ctx: None,
)

#: The supported modes.
MODES = ["a", "b"]

#: A private constant: never documented.
_SECRET = 42

# An ordinary comment documents nothing.
UNDOCUMENTED = 1

_unexported_provider_holder = struct(p = provider())

s = struct(
    unexported_repo_rule = repository_rule(implementation = lambda repository_ctx: None),
    nested = struct(function = my_function, _hidden = my_function),
)
