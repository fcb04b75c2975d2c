#!/bin/sh
# Fails on its first attempt, passes afterwards: the attempts are counted in a file outside the sandbox.
n=$(cat "$FLAKY_DIR/count" 2>/dev/null || echo 0)
echo $((n + 1)) > "$FLAKY_DIR/count"
echo "attempt $((n + 1))"
[ "$n" -gt 0 ]
