"""Symbolic macro attribute inheritance tests"""

def _impl(name, visibility, **kwargs):
    pass

# The attributes of stardoc's input.bzl, declared once: what the two sources and the three macros share.
_SOURCE_ATTRS = {
    "args": attr.string_list(doc = "Arguments", mandatory = True),
    "deps": attr.label_list(doc = "Dependencies"),
}
_MACRO_ATTRS = {"srcs": attr.label_list(doc = "Source files", allow_files = True)}

_inherit_src_macro = macro(attrs = _SOURCE_ATTRS, implementation = _impl)

def _rule_impl(ctx):
    pass

_inherit_src_rule = rule(attrs = _SOURCE_ATTRS, implementation = _rule_impl)

inherit_from_common = macro(doc = "Initializes some targets.", attrs = _MACRO_ATTRS, inherit_attrs = "common", implementation = _impl)

inherit_from_macro = macro(doc = "Initializes some targets.", attrs = _MACRO_ATTRS, inherit_attrs = _inherit_src_macro, implementation = _impl)

inherit_from_rule = macro(
    doc = "Initializes some targets.",
    attrs = _MACRO_ATTRS | {"deps": None},
    inherit_attrs = _inherit_src_rule,
    implementation = _impl,
)

inherit_from_native = macro(
    attrs = {
        "srcs": None,
        "outs": None,
        "cmd": None,
    },
    inherit_attrs = native.genrule,
    implementation = _impl,
)
