/**
 * `@bazel_tools//tools/bash/runfiles:runfiles.bash`, written for Kiln: the Bash runfiles library as
 * Bazel documents it (tools/bash/runfiles/runfiles.bash's header). A script sources it with the
 * usual "runfiles.bash initialization" block and calls `rlocation <runfiles path>`, which prints the
 * file's absolute path: from RUNFILES_MANIFEST_FILE (lines `<runfiles path> <absolute or exec path>`,
 * a directory entry answering for the files below it) or under RUNFILES_DIR, found next to `$0`
 * (`$0.runfiles_manifest`, `$0.runfiles/MANIFEST`, `$0.runfiles`) when neither is set. An absolute
 * path is printed as it is; a path that is not normalised is an error; a path not in the runfiles
 * prints nothing and returns 1. `runfiles_export_envvars` exports both variables (and JAVA_RUNFILES)
 * for child processes, and `runfiles_current_repository` names the repository of the calling script.
 */
export const RUNFILES_BASH = `#!/usr/bin/env bash
# Bash runfiles library (Kiln's own @bazel_tools). Source it, then call: rlocation <runfiles path>
#
#   # --- begin runfiles.bash initialization v3 ---
#   set -uo pipefail; set +e; f=bazel_tools/tools/bash/runfiles/runfiles.bash
#   source "\${RUNFILES_DIR:-/dev/null}/$f" 2>/dev/null || \\
#     source "$(grep -sm1 "^$f " "\${RUNFILES_MANIFEST_FILE:-/dev/null}" | cut -f2- -d' ')" 2>/dev/null || \\
#     source "$0.runfiles/$f" 2>/dev/null || \\
#     source "$(grep -sm1 "^$f " "$0.runfiles_manifest" | cut -f2- -d' ')" 2>/dev/null || \\
#     { echo>&2 "ERROR: cannot find $f"; exit 1; }; f=; set -e
#   # --- end runfiles.bash initialization v3 ---

if [[ -n "\${RUNFILES_LIB_DEBUG:-}" ]]; then
  _rlocation_debug() { echo >&2 "INFO[runfiles.bash]: $*"; }
else
  _rlocation_debug() { :; }
fi

# Where the runfiles are, when the caller did not say: next to the program that sourced us.
if [[ ! -d "\${RUNFILES_DIR:-/dev/null}" && ! -f "\${RUNFILES_MANIFEST_FILE:-/dev/null}" ]]; then
  if [[ -f "$0.runfiles_manifest" ]]; then
    export RUNFILES_MANIFEST_FILE="$0.runfiles_manifest"
  elif [[ -f "$0.runfiles/MANIFEST" ]]; then
    export RUNFILES_MANIFEST_FILE="$0.runfiles/MANIFEST"
  elif [[ -d "$0.runfiles" ]]; then
    export RUNFILES_DIR="$0.runfiles"
  fi
fi

# A manifest's second column may be relative (Kiln writes exec paths, so manifests are the same on
# every machine): then the file is the entry's own path in the runfiles tree beside the manifest
# (<dir>/MANIFEST, <x>.runfiles_manifest beside <x>.runfiles), else the exec path under a directory
# above the manifest (the execroot, which holds bazel-out/).
_rlocation_absolute() {
  local key="$1" target="$2"
  if [[ "$target" == /* ]]; then
    echo "$target"
    return 0
  fi
  local tree=""
  case "$RUNFILES_MANIFEST_FILE" in
    */MANIFEST) tree="\${RUNFILES_MANIFEST_FILE%/MANIFEST}" ;;
    *.runfiles_manifest) tree="\${RUNFILES_MANIFEST_FILE%_manifest}" ;;
  esac
  if [[ -n "$tree" && -e "$tree/$key" ]]; then
    echo "$(cd "$(dirname "$tree/$key")" && pwd)/$(basename "$key")"
    return 0
  fi
  local probe
  probe="$(cd "$(dirname "$RUNFILES_MANIFEST_FILE")" && pwd)"
  while [[ "$probe" != "/" && -n "$probe" ]]; do
    if [[ -e "$probe/$target" ]]; then
      echo "$probe/$target"
      return 0
    fi
    probe="$(dirname "$probe")"
  done
  echo "$target"
}

# The manifest's value for <key> (the text after "<key> " on its line), or status 1.
_rlocation_manifest_entry() {
  local key="$1" l
  while IFS= read -r l; do
    if [[ "$l" == "$key "* ]]; then
      echo "\${l#"$key "}"
      return 0
    fi
  done <"$RUNFILES_MANIFEST_FILE"
  return 1
}

# Looks <path> up in the manifest: its own line, else the nearest directory entry above it.
_rlocation_from_manifest() {
  local path="$1" value prefix
  if value="$(_rlocation_manifest_entry "$path")"; then
    _rlocation_absolute "$path" "$value"
    return 0
  fi
  prefix="$path"
  while [[ "$prefix" == */* ]]; do
    prefix="\${prefix%/*}"
    if value="$(_rlocation_manifest_entry "$prefix")"; then
      echo "$(_rlocation_absolute "$prefix" "$value")\${path#"$prefix"}"
      return 0
    fi
  done
  return 1
}

# rlocation <runfiles path>: prints the absolute path of a runfile; returns 1 when there is none.
rlocation() {
  if [[ $# -ne 1 ]]; then
    echo >&2 "ERROR[runfiles.bash]: rlocation takes one argument, got $#"
    return 1
  fi
  local path="$1"
  if [[ "$path" == /* ]]; then
    _rlocation_debug "rlocation($path): absolute path, return"
    echo "$path"
    return 0
  fi
  if [[ -z "$path" || "$path" == ../* || "$path" == */.. || "$path" == ./* || "$path" == */./* || "$path" == */. || "$path" == *//* || "$path" == */../* ]]; then
    echo >&2 "ERROR[runfiles.bash]: rlocation($path): path is not normalized"
    return 1
  fi
  if [[ -d "\${RUNFILES_DIR:-/dev/null}" ]]; then
    local candidate="\${RUNFILES_DIR%/}/$path"
    if [[ -e "$candidate" ]]; then
      _rlocation_debug "rlocation($path): found under RUNFILES_DIR"
      echo "$candidate"
      return 0
    fi
  fi
  if [[ -f "\${RUNFILES_MANIFEST_FILE:-/dev/null}" ]]; then
    if _rlocation_from_manifest "$path"; then
      _rlocation_debug "rlocation($path): found in the manifest"
      return 0
    fi
  fi
  _rlocation_debug "rlocation($path): not found"
  return 1
}
export -f rlocation _rlocation_from_manifest _rlocation_manifest_entry _rlocation_absolute _rlocation_debug 2>/dev/null || true

# runfiles_export_envvars: makes the runfiles visible to child processes.
runfiles_export_envvars() {
  if [[ ! -f "\${RUNFILES_MANIFEST_FILE:-/dev/null}" && ! -d "\${RUNFILES_DIR:-/dev/null}" ]]; then
    return 1
  fi
  if [[ ! -f "\${RUNFILES_MANIFEST_FILE:-/dev/null}" ]]; then
    if [[ -f "$RUNFILES_DIR/MANIFEST" ]]; then
      export RUNFILES_MANIFEST_FILE="$RUNFILES_DIR/MANIFEST"
    elif [[ -f "\${RUNFILES_DIR%.runfiles}.runfiles_manifest" ]]; then
      export RUNFILES_MANIFEST_FILE="\${RUNFILES_DIR%.runfiles}.runfiles_manifest"
    else
      export RUNFILES_MANIFEST_FILE=
    fi
  elif [[ ! -d "\${RUNFILES_DIR:-/dev/null}" ]]; then
    if [[ "$RUNFILES_MANIFEST_FILE" == */MANIFEST && -d "\${RUNFILES_MANIFEST_FILE%/MANIFEST}" ]]; then
      export RUNFILES_DIR="\${RUNFILES_MANIFEST_FILE%/MANIFEST}"
    elif [[ "$RUNFILES_MANIFEST_FILE" == *.runfiles_manifest && -d "\${RUNFILES_MANIFEST_FILE%_manifest}" ]]; then
      export RUNFILES_DIR="\${RUNFILES_MANIFEST_FILE%_manifest}"
    else
      export RUNFILES_DIR=
    fi
  fi
  export JAVA_RUNFILES="$RUNFILES_DIR"
}
export -f runfiles_export_envvars 2>/dev/null || true

# runfiles_current_repository: the repository of the script that called it ("" for the main one),
# from where that script lies in the runfiles tree (<runfiles>/<repository>/...).
runfiles_current_repository() {
  local caller="\${BASH_SOURCE[1]:-$0}"
  local abs
  abs="$(cd "$(dirname "$caller")" 2>/dev/null && pwd)/$(basename "$caller")"
  local root="\${RUNFILES_DIR:-}"
  if [[ -n "$root" && "$abs" == "\${root%/}/"* ]]; then
    local rel="\${abs#"\${root%/}/"}"
    local repo="\${rel%%/*}"
    if [[ "$repo" == "\${TEST_WORKSPACE:-_main}" || "$repo" == _main || "$repo" == __main__ ]]; then
      echo ""
    else
      echo "$repo"
    fi
    return 0
  fi
  echo ""
}
export -f runfiles_current_repository 2>/dev/null || true
`;
