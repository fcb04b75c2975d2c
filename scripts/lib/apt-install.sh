# Sourced by the set-up scripts. apt_install WHAT PACKAGE...: installs Debian packages with apt-get,
# once, where this runs as root with apt (a fresh CI machine); returns 1 without trying elsewhere.
apt_install() {
  local what=$1
  shift
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then return 1; fi
  echo "installing $what with apt-get (one time)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "$@" >&2
}
