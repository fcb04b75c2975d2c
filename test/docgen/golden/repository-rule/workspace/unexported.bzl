def _my_impl(repository_ctx):
    pass

s = struct(
    unexported_repo_rule = repository_rule(
        doc = "Unexported repo rule",
        implementation = _my_impl,
    ),
)
