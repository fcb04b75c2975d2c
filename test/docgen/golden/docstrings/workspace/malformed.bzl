def bad_summary():
    """Summary line
    continued without a blank line.
    """

def bad_args(x):
    """Summary.

    Args:
      this is not a parameter
    """
