def _my_impl(name, visibility):
    pass

my_finalizer = macro(
    doc = "My finalizer",
    implementation = _my_impl,
    finalizer = True,
)
