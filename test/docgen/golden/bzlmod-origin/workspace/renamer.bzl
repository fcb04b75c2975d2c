load("@origin_repo//:origin.bzl", "MyInfo", "my_aspect", "my_macro", "my_rule")

namespace = struct(
    renamed_macro = my_macro,
    RenamedInfo = MyInfo,
    renamed_rule = my_rule,
    renamed_aspect = my_aspect,
)
