#!/usr/bin/env bash
# Builds Kiln's base image, kiln/base, from the host's own shell and tools, since no registry is
# reachable: bash, sh, coreutils, sed, grep, awk, find/xargs, diff, gzip, tar and the shared
# libraries they load (found with ldd), a non-root user `kiln` (uid/gid 1000) plus `nobody`, and /tmp.
#
# The image is tagged kiln/base:<recipe hash> and kiln/base:latest and carries the label
# kiln.recipe=<recipe hash>. The recipe hash covers this script and the identity (path, size,
# mtime) of every host tool copied, so a second run finds the image and returns at once; an
# upgraded host tool or an edited recipe builds a new image.
#
# Needs DOCKER_HOST (or the default socket) pointing at a running engine; see
# scripts/docker/start-dockerd.sh. Prints the image name (kiln/base:latest) on stdout.
set -euo pipefail
IMAGE=kiln/base
log() { echo "base-image: $*" >&2; }

# Tools to copy; each is looked up on PATH. Missing optional ones are skipped.
REQUIRED=(bash sh env cat tr sed grep)
OPTIONAL=(awk find xargs diff cmp gzip gunzip zcat tar which)
if command -v dpkg >/dev/null 2>&1 && dpkg -L coreutils >/dev/null 2>&1; then
  # Every program of coreutils, exactly as the host package ships it.
  mapfile -t COREUTILS < <(dpkg -L coreutils | grep -E '^(/usr)?/s?bin/[^/]+$' | xargs -n1 basename | sort -u)
else
  COREUTILS=(basename chmod chown cp cut date dd dirname du echo expr false head id install ln ls
    md5sum mkdir mktemp mv nproc od printf pwd readlink realpath rm rmdir seq sha1sum sha256sum sleep
    sort stat tail tee test timeout touch true uname uniq wc whoami yes '[')
fi

declare -A SOURCE=()
for tool in "${REQUIRED[@]}" "${OPTIONAL[@]}" "${COREUTILS[@]}"; do
  # type -P: the program file, not a shell builtin of the same name (true, echo, printf, test...).
  path="$(type -P -- "$tool" 2>/dev/null || true)"
  case "$path" in
    /*) SOURCE["$tool"]="$path" ;;
    *) if printf '%s\n' "${REQUIRED[@]}" | grep -qxF -- "$tool"; then
         log "required tool '$tool' is not on this host's PATH"
         exit 1
       fi ;;
  esac
done

recipe_hash() {
  {
    cat "$0"
    for tool in $(printf '%s\n' "${!SOURCE[@]}" | sort); do
      stat -L -c "$tool %s %Y" -- "${SOURCE[$tool]}"
    done
  } | sha256sum | cut -c1-16
}
RECIPE="$(recipe_hash)"

existing="$(docker image inspect --format '{{index .Config.Labels "kiln.recipe"}}' "$IMAGE:latest" 2>/dev/null || true)"
if [ "$existing" = "$RECIPE" ]; then
  log "$IMAGE:latest is up to date (recipe $RECIPE)"
  echo "$IMAGE:latest"
  exit 0
fi

started=$(date +%s%N)
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
ROOT="$WORK/rootfs"
mkdir -p "$ROOT"/usr/bin "$ROOT"/usr/lib "$ROOT"/usr/lib64 "$ROOT"/etc "$ROOT"/tmp "$ROOT"/home/kiln \
  "$ROOT"/dev "$ROOT"/proc "$ROOT"/sys "$ROOT"/work
# Merged /usr, as Debian 12 lays it out, so #!/bin/sh and /lib64/ld-linux paths resolve.
ln -s usr/bin "$ROOT/bin"
ln -s usr/bin "$ROOT/usr/sbin"
ln -s usr/bin "$ROOT/sbin"
ln -s usr/lib "$ROOT/lib"
ln -s usr/lib64 "$ROOT/lib64"
chmod 1777 "$ROOT/tmp"

# Copies a host file to the same path in the rootfs, with every symlink on the way resolved to
# its target's content (the rootfs has only the few directory symlinks above).
copy_file() {
  local src="$1" dest
  dest="$ROOT$(realpath -s -- "$src" | sed -E 's#^/(bin|sbin)/#/usr/bin/#; s#^/usr/sbin/#/usr/bin/#; s#^/lib/#/usr/lib/#; s#^/lib64/#/usr/lib64/#')"
  [ -e "$dest" ] && return 0
  mkdir -p "$(dirname "$dest")"
  cp -L --preserve=mode -- "$src" "$dest"
}

declare -A LIBS=()
for tool in "${!SOURCE[@]}"; do
  src="${SOURCE[$tool]}"
  real="$(readlink -f -- "$src")"
  # Each tool lands in /usr/bin under the name it is called by (awk -> mawk's content, etc.).
  cp -L --preserve=mode -- "$real" "$ROOT/usr/bin/$tool"
  while read -r lib; do LIBS["$lib"]=1; done < <(ldd "$real" 2>/dev/null | grep -oE '/[^ ]+' || true)
done
for lib in "${!LIBS[@]}"; do copy_file "$lib"; done

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
chown 1000:1000 "$ROOT/home/kiln"

# A reproducible tarball: sorted names, fixed times and owners (except the kiln home directory).
tar --sort=name --mtime=@0 --numeric-owner -C "$ROOT" -cf "$WORK/rootfs.tar" .
content="$(sha256sum "$WORK/rootfs.tar" | cut -c1-12)"
docker import \
  --change "LABEL kiln.recipe=$RECIPE kiln.content=$content" \
  --change 'ENV PATH=/usr/bin:/bin' \
  --change 'USER 1000:1000' \
  --change 'WORKDIR /work' \
  --change 'CMD ["/bin/sh"]' \
  "$WORK/rootfs.tar" "$IMAGE:$RECIPE" >/dev/null
docker tag "$IMAGE:$RECIPE" "$IMAGE:latest"
# Earlier recipes' images are superseded; drop them so the data root does not grow.
{ docker images "$IMAGE" --format '{{.Tag}}' | grep -vx -e latest -e "$RECIPE" || true; } | while read -r old; do
  docker rmi "$IMAGE:$old" >/dev/null 2>&1 || true
done
size=$(du -sh "$WORK/rootfs.tar" | cut -f1)
log "built $IMAGE:$RECIPE ($size, ${#SOURCE[@]} tools, content $content) in $(( ($(date +%s%N) - started) / 1000000 )) ms"
echo "$IMAGE:latest"
