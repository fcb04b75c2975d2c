#!/bin/sh
for a in "$@"; do echo "arg: [$a]"; done
for v in LOC LOCS ROOT EXEC MODE LIT; do eval "echo \"env $v: [\${$v-<unset>}]\""; done
