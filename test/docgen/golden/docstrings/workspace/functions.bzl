"""Docstring sections."""

def summary_only():
    """Just a summary."""

def no_docstring(a, b):
    pass

def full(a, b = "x", *args, c, d = None, **kwargs):
    """Summary line.

    A longer description
    spanning two lines.

      Indented text is kept.

    Args:
      a: The first parameter.
      b: The second parameter, which has
        a description on two lines.
      *args: Remaining positional arguments.
      c: Keyword-only.
      d (str): With a type annotation.
      **kwargs: Remaining keyword arguments.

    Returns:
      A value,
      described on two lines.

    Deprecated:
      Use `other` instead.
    """
    return a

def keyword_only(*, x, y = [1, 2], z = {"k": (1,)}):
    """Keyword-only parameters after a bare star.

    Args:
      x: X.
    """

def defaults(a = True, b = None, c = 1.5, d = "s", e = Label("//:BUILD")):
    """Default values of every kind."""

lambda_fn = lambda x, y = 1: x
