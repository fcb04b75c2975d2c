load(":origin.bzl", "MyInfo", "MyOtherInfo", "my_aspect", "my_macro", "my_rule", "return_lambda", "return_nested")

namespace = struct(
    renamed_macro = my_macro,
    RenamedInfo = MyInfo,
    renamed_rule = my_rule,
    renamed_aspect = my_aspect,
)
other_namespace = struct(
    RenamedOtherInfo = MyOtherInfo,
)

exported_nested = return_nested()
exported_lambda = return_lambda()

alias_macro = my_macro
