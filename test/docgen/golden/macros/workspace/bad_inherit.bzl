bad = macro(
    implementation = lambda name, visibility: None,
    inherit_attrs = 42,
)
