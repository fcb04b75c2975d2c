#!/usr/bin/env bash
# Builds Kiln's base image, kiln/base, from Debian's packages, since no image registry is reachable:
# the packages of packages.txt and their dependencies (no recommends), as apt resolves them for
# this host's release, unpacked into a rootfs that is `docker import`ed. The .deb files are kept
# under .cache/base-image/debs, so only the first build downloads them, and the package closure
# of each recipe in .cache/base-image/closure-<recipe hash>.
#
# Packages are unpacked, not installed: no maintainer script runs (as in distroless images). What
# their scripts would have done and the image needs is done here: the alternatives' links (awk,
# which), the dynamic linker's cache (ldconfig -r), and /etc/passwd and /etc/group with root, kiln
# (uid/gid 1000) and nobody.
#
# The image is tagged kiln/base:<recipe hash> and, once built, kiln/base:latest. The recipe hash
# covers this script and packages.txt, so a second run finds the image and returns at once, and an
# edited recipe builds a new image (exactly once). Debian's point releases do not change the hash:
# the label kiln.packages lists the versions an image was built from.
#
# Needs DOCKER_HOST (or the default socket) pointing at a running engine (see
# scripts/docker/start-dockerd.sh), root (for ldconfig -r and the owners in the rootfs), and apt.
# Prints the image name (kiln/base:<recipe hash>) on stdout; progress goes to stderr.
set -euo pipefail
IMAGE=kiln/base
HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${KILN_BASE_IMAGE_CACHE:-$HERE/../../.cache/base-image}"
log() { echo "base-image: $*" >&2; }

RECIPE="$(cat "$HERE/build.sh" "$HERE/packages.txt" | sha256sum | cut -c1-16)"
if docker image inspect "$IMAGE:$RECIPE" >/dev/null 2>&1; then
  docker tag "$IMAGE:$RECIPE" "$IMAGE:latest"
  log "$IMAGE:$RECIPE is up to date"
  echo "$IMAGE:$RECIPE"
  exit 0
fi

started=$(date +%s%N)
mapfile -t PACKAGES < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$HERE/packages.txt" | grep -v '^$')
DEBS="$CACHE/debs"
mkdir -p "$DEBS/partial"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
: >"$WORK/status"
# apt as if nothing were installed (an empty dpkg status), so it resolves the whole closure; no
# lock on the host's dpkg database, which this never touches.
APT_OPTIONS=(-o "Dir::State::status=$WORK/status" -o "Dir::Cache::archives=$DEBS" -o Debug::NoLocking=1
  --no-install-recommends -q)

resolve() { apt-get install -s "${APT_OPTIONS[@]}" "${PACKAGES[@]}" 2>"$WORK/apt.err" | sed -nE 's/^Inst ([^ ]+) \(([^ ]+) .*/\1 \2/p'; }
# The closure (name version lines) is resolved once per recipe: apt takes seconds to load its lists.
CLOSURE="$CACHE/closure-$RECIPE"
if [ ! -s "$CLOSURE" ]; then
  if ! resolve >"$WORK/closure" || [ ! -s "$WORK/closure" ]; then
    log "apt cannot resolve the packages ($(tail -n1 "$WORK/apt.err")); updating its lists once"
    apt-get update -qq >&2
    resolve >"$WORK/closure" || { cat "$WORK/apt.err" >&2; exit 1; }
  fi
  mv "$WORK/closure" "$CLOSURE"
fi
cp "$CLOSURE" "$WORK/closure"
deb_of() { local found=("$DEBS/${1}_${2//:/%3a}_"*.deb); echo "${found[0]}"; }
missing=0
while read -r name version; do [ -f "$(deb_of "$name" "$version")" ] || missing=$((missing + 1)); done <"$WORK/closure"
if [ "$missing" -gt 0 ]; then
  log "$(wc -l <"$WORK/closure") packages; downloading $missing into $DEBS"
  apt-get install --download-only -y "${APT_OPTIONS[@]}" "${PACKAGES[@]}" >"$WORK/apt.out" 2>&1 || {
    cat "$WORK/apt.out" >&2
    exit 1
  }
fi

ROOT="$WORK/rootfs"
mkdir -p "$ROOT"/usr/bin "$ROOT"/usr/sbin "$ROOT"/usr/lib "$ROOT"/usr/lib64 "$ROOT"/etc "$ROOT"/tmp \
  "$ROOT"/home/kiln "$ROOT"/dev "$ROOT"/proc "$ROOT"/sys "$ROOT"/work
# Merged /usr, as Debian 12 lays it out: packages still ship /bin/sh and /lib/..., which land in /usr.
for dir in bin sbin lib lib64; do ln -s "usr/$dir" "$ROOT/$dir"; done
while read -r name version; do
  deb="$(deb_of "$name" "$version")"
  [ -f "$deb" ] || { log "apt downloaded no .deb for $name $version"; exit 1; }
  # Keep the merged-/usr links; leave out manuals and translations.
  dpkg-deb --fsys-tarfile "$deb" |
    tar -x --keep-directory-symlink --no-same-owner -C "$ROOT" \
      --exclude='./usr/share/man/*' --exclude='./usr/share/info/*' --exclude='./usr/share/locale/*'
done <"$WORK/closure"

# What the maintainer scripts would have linked: Debian's alternatives for the names genrules use.
ln -sf gawk "$ROOT/usr/bin/awk"
ln -sf which.debianutils "$ROOT/usr/bin/which"
cat >"$ROOT/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/usr/sbin/nologin
kiln:x:1000:1000:Kiln build user:/home/kiln:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
PASSWD
cat >"$ROOT/etc/group" <<'GROUP'
root:x:0:
kiln:x:1000:
nogroup:x:65534:
GROUP
printf 'passwd: files\ngroup: files\nhosts: files\n' >"$ROOT/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$ROOT/etc/hosts"
ldconfig -r "$ROOT"
chmod 1777 "$ROOT/tmp"
chown 1000:1000 "$ROOT/home/kiln"
for tool in bash sh awk rev column find diff grep sed tar gzip xz zip unzip file python3 perl which; do
  [ -e "$ROOT/usr/bin/$tool" ] || { log "the rootfs has no /usr/bin/$tool"; exit 1; }
done

# A reproducible tarball: sorted names, fixed times, numeric owners.
tar --sort=name --mtime=@0 --numeric-owner -C "$ROOT" -cf "$WORK/rootfs.tar" .
content="$(sha256sum "$WORK/rootfs.tar" | cut -c1-12)"
packages="$(tr ' ' '=' <"$WORK/closure" | sort | tr '\n' ' ')"
docker import \
  --change "LABEL kiln.recipe=$RECIPE kiln.content=$content kiln.source=debian kiln.packages=\"${packages% }\"" \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change 'USER 1000:1000' \
  --change 'WORKDIR /work' \
  --change 'CMD ["/bin/sh"]' \
  "$WORK/rootfs.tar" "$IMAGE:$RECIPE" >/dev/null
docker tag "$IMAGE:$RECIPE" "$IMAGE:latest"
# Earlier recipes' images of this script are superseded; drop them so the data root does not grow.
{ docker images "$IMAGE" --filter label=kiln.source=debian --format '{{.Tag}}' | grep -vx -e latest -e "$RECIPE" || true; } |
  while read -r old; do docker rmi "$IMAGE:$old" >/dev/null 2>&1 || true; done
size=$(du -sh "$WORK/rootfs.tar" | cut -f1)
log "built $IMAGE:$RECIPE ($size, $(wc -l <"$WORK/closure") packages, content $content) in $(( ($(date +%s%N) - started) / 1000000 )) ms"
echo "$IMAGE:$RECIPE"
