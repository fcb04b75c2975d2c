BASE = ["top"]
