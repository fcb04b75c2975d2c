#: Leading doc comment
ANSWER = 42 #: Trailing doc comment
