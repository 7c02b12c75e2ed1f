#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Caller credentials and POSIX semantics: the same checks (posix-checks.py:
# other uids reading/writing per mode, sticky and setgid directories,
# ownership of new files/dirs/symlinks/fifos per uid, suid/sgid clearing on
# write/truncate/chown, link counts and protected_hardlinks, rename over an
# existing file, timestamps, chmod/chown/utime by a non-owner, truncate
# permission, trusted.*/security.capability) run as several uids on a tmpfs
# directory and through a root fsgate mount (allow_other,
# default_permissions) of another directory of the same tmpfs. Every line
# must be identical, except the deliberate one: a set-id bit cannot be made
# through the view.

HERE=$(cd "$(dirname "$0")" && pwd)
TMPDIR=${FSGATE_POSIX_TMPDIR:-/var/tmp}
. "$(dirname "$0")/../run/libtest.sh"

FSGATE=${FSGATE:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/fsgate/fsgate}
CHECKS=$HERE/posix-checks.py

if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ]; then
    skip "POSIX checks through the view" "root and /dev/fuse"
    done_testing
fi

T=$TESTDIR/tmpfs
mkdir -p "$T" "$TESTDIR/mnt"
mount -t tmpfs -o mode=0755 fsgate-posix "$T" || { not_ok "mount tmpfs"; done_testing; }
_posix_cleanup () {
    [ -n "${DAEMON:-}" ] && kill -TERM "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null
    grep -q " $TESTDIR/mnt " /proc/self/mountinfo && umount -l "$TESTDIR/mnt"
    umount -l "$T"
    _cleanup
}
trap _posix_cleanup EXIT
mkdir "$T/native" "$T/view"

python3 "$CHECKS" "$T/native" > "$TESTDIR/native.txt" 2> "$TESTDIR/native.err"
is "checks run natively" "$?:$(cat "$TESTDIR/native.err")" "0:"

"$FSGATE" mount --profile none --rw "$T/view" --xattr -f "$TESTDIR/mnt" 2> "$TESTDIR/daemon.err" &
DAEMON=$!
track $DAEMON
for _ in $(seq 200); do
    grep -q " $TESTDIR/mnt " /proc/self/mountinfo && break
    sleep 0.05
done
python3 "$CHECKS" "$TESTDIR/mnt$T/view" "$T/view" > "$TESTDIR/view.txt" 2> "$TESTDIR/view.err"
is "checks run through the view" "$?:$(cat "$TESTDIR/view.err")" "0:"

mapfile -t native < "$TESTDIR/native.txt"
mapfile -t view < "$TESTDIR/view.txt"
is "same number of results" "${#view[@]}" "${#native[@]}"
for i in "${!native[@]}"; do
    n=${native[$i]} v=${view[$i]:-}
    case $n in
    DIVERGE*)
        is "view strips a set-id bit made by chmod (host: ${n##*: })" \
            "${v##*: }" "$(echo "${n##*: }" | sed 's/mode=4/mode=0/')"
        ;;
    *)
        is "${n%%: *}: ${n#*: }" "$v" "$n"
        ;;
    esac
done

done_testing
