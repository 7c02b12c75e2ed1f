#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Build, or reuse, the Debian image the container suite runs fsgate-run in,
# from Debian packages only: mmdebstrap from the machine's configured Debian
# mirror, then `podman import`. Prints the image name on stdout.
#
# The image holds only the runtime libraries fsgate-run links against plus
# python3 and git for the workloads; fsgate-run itself is bind-mounted from
# the build directory. It is cached across runs, keyed by everything that goes
# into it (suite, variant, packages, mirror): the root file system as
# $FSGATE_TEST_CACHE/debian-KEY.tar (default /var/cache/fsgate-tests), the
# image as localhost/fsgate-test-debian:KEY in podman's storage. A cold build
# takes about a minute here (docs/testing.md).
#
# Exit status: 0 with the image name; 77 when a facility is missing (message
# on stderr); 1 on a failed build.
set -euo pipefail

suite=bookworm
variant=apt
packages=libfuse3-3,fuse3,libglib2.0-0,libjson-glib-1.0-0,libseccomp2,python3,git,util-linux
cache=${FSGATE_TEST_CACHE:-/var/cache/fsgate-tests}

# The first Debian (not security) mirror of the machine's apt sources, in
# either format (one-line .list or deb822 .sources).
find_mirror () {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -r "$f" ] || continue
    awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' "$f" \
      | grep -v security || true
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }' "$f" | grep -v security || true
  done
}

for tool in mmdebstrap podman; do
  if ! command -v "$tool" >/dev/null; then
    echo "image.sh: $tool is not installed (apt-get install podman runc mmdebstrap uidmap)" >&2
    exit 77
  fi
done
mirror=$(find_mirror | head -n 1)
if [ -z "$mirror" ]; then
  echo "image.sh: no Debian mirror in /etc/apt/sources.list*" >&2
  exit 77
fi

key=$(printf '%s\n' "v1" "$suite" "$variant" "$packages" "$mirror" | sha256sum | cut -c1-16)
image=localhost/fsgate-test-debian:$key
tar=$cache/debian-$key.tar
mkdir -p "$cache"

# One builder at a time; the others wait and then reuse its result.
exec 9>"$cache/.lock"
flock 9

if ! podman image exists "$image"; then
  if [ ! -s "$tar" ]; then
    tmp=$(mktemp --suffix=.tar "$cache/.debian-$key.XXXXXX")
    work=$(mktemp -d "$cache/.mmdebstrap.XXXXXX")
    trap 'rm -f "$tmp"; rm -rf --one-file-system "$work"' EXIT
    trap 'exit 1' INT TERM HUP # the EXIT trap removes the partial build then too
    rm -f "$tmp" # mmdebstrap writes the tar itself (the format from the name)
    echo "image.sh: building $tar from $mirror ($suite, $packages)" >&2
    # In a mount namespace of its own, so that nothing it mounts in its
    # chroot (/dev/pts, /proc, ...) can outlive it on the host; without
    # meson's MALLOC_PERTURB_, under which a process of the chroot kept
    # /dev/pts busy and mmdebstrap's cleanup failed (seen here).
    if ! env -u MALLOC_PERTURB_ TMPDIR="$work" unshare -m --propagation private \
        mmdebstrap --quiet --variant="$variant" --include="$packages" "$suite" "$tmp" "$mirror" >&2; then
      echo "image.sh: mmdebstrap failed" >&2
      exit 1
    fi
    mv "$tmp" "$tar"
    rm -rf --one-file-system "$work"
    trap - EXIT
  fi
  podman import --quiet "$tar" "$image" >/dev/null
fi

# Keep only the current key (each is about 270 MB): older tars, their
# rootless storage (test-container.sh) and their images; leftovers of
# interrupted builds whose builder is gone (we hold the lock).
for f in "$cache"/debian-*.tar "$cache"/rootless-* "$cache"/.debian-*.tar "$cache"/.mmdebstrap.*; do
  [ -e "$f" ] || continue
  case $f in
    "$tar" | "$cache/rootless-$key") continue ;;
  esac
  rm -rf --one-file-system "$f"
done
for old in $(podman images --format '{{.Repository}}:{{.Tag}}' 2>/dev/null \
               | grep '^localhost/fsgate-test-debian:' | grep -vxF "$image" || true); do
  podman rmi --force "$old" >/dev/null 2>&1 || true
done
echo "$image"
