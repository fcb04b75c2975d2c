{NAME}: {FILES} files, style {STYLE}
