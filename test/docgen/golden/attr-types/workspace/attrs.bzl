"""Every attribute type, with and without defaults."""

ProviderA = provider()
ProviderB = provider()

all_types = rule(
    implementation = lambda ctx: None,
    attrs = {
        "bool_default": attr.bool(),
        "bool_true": attr.bool(default = True),
        "int_default": attr.int(),
        "int_set": attr.int(default = -3, values = [-3, 7]),
        "int_mandatory": attr.int(mandatory = True),
        "int_list_default": attr.int_list(),
        "int_list_set": attr.int_list(default = [1, 2]),
        "string_default": attr.string(),
        "string_set": attr.string(default = "say \"hi\"\n", doc = "With escapes."),
        "string_list_default": attr.string_list(),
        "string_list_set": attr.string_list(default = ["a", "b"]),
        "string_dict_default": attr.string_dict(),
        "string_dict_set": attr.string_dict(default = {"k": "v"}),
        "string_list_dict_default": attr.string_list_dict(),
        "string_list_dict_set": attr.string_list_dict(default = {"k": ["v1", "v2"]}),
        "label_default": attr.label(),
        "label_set": attr.label(default = "//target:target"),
        "label_file": attr.label(default = "//target:a.txt", allow_single_file = True),
        "label_other_repo": attr.label(default = "@other//pkg:pkg"),
        "label_list_default": attr.label_list(),
        "label_list_set": attr.label_list(default = ["//target", ":local"]),
        "label_list_providers": attr.label_list(providers = [[ProviderA], [ProviderB, DefaultInfo]]),
        "label_keyed_string_dict_default": attr.label_keyed_string_dict(),
        "label_keyed_string_dict_set": attr.label_keyed_string_dict(default = {"//target:a.txt": "value"}),
        "output_default": attr.output(),
        "output_list_default": attr.output_list(),
        "legacy_provider": attr.label(providers = ["legacy_struct_provider"]),
        "exec_tool": attr.label(executable = True, cfg = "exec", default = "//target:a.txt"),
        "unicode_doc": attr.string(doc = "Größe: ✓"),
    },
)
