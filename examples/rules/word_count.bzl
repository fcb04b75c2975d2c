"""word_count: a small Starlark rule. Counts the words of its srcs with a shell action and writes a
one-line summary from a template into the `summary` output group."""

CountInfo = provider(
    doc = "What a word_count target counted.",
    fields = {"counts": "The file with one `<words> <file>` line per source, then the total."},
)

def _word_count_impl(ctx):
    counts = ctx.actions.declare_file(ctx.label.name + ".counts")
    args = ctx.actions.args()
    args.add_all(ctx.files.srcs)
    ctx.actions.run_shell(
        outputs = [counts],
        inputs = ctx.files.srcs,
        arguments = [args],
        command = "wc -w \"$@\" | sed 's/^ *//' > " + counts.path,
        mnemonic = "WordCount",
        progress_message = "Counting words for %{label}",
    )
    summary = ctx.actions.declare_file(ctx.label.name + ".summary")
    ctx.actions.expand_template(
        template = ctx.file._template,
        output = summary,
        substitutions = {
            "{NAME}": ctx.label.name,
            "{FILES}": str(len(ctx.files.srcs)),
            "{STYLE}": ctx.attr.style,
        },
    )
    return [
        DefaultInfo(files = depset([counts])),
        OutputGroupInfo(summary = depset([summary])),
        CountInfo(counts = counts),
    ]

word_count = rule(
    implementation = _word_count_impl,
    doc = "Counts the words of text files.",
    attrs = {
        "srcs": attr.label_list(allow_files = [".txt"], mandatory = True, doc = "The text files."),
        "style": attr.string(default = "plain", doc = "Written into the summary."),
        "_template": attr.label(default = "//rules:summary.tpl", allow_single_file = True),
    },
)
