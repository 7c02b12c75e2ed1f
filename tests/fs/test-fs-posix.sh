#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Caller credentials and POSIX semantics: the same checks (posix-checks.py:
# other uids reading/writing per mode, sticky and setgid directories,
# ownership of new files/dirs/symlinks/fifos per uid, suid/sgid clearing on
# write/truncate/chown, link counts and protected_hardlinks, rename over an
# existing file, timestamps, chmod/chown/utime by a non-owner, truncate
# permission, trusted.*/security.capability) run as several uids on a tmpfs
# directory and through a root fsgate mount (allow_other) of another
# directory of the same tmpfs, twice: with default_permissions (the kernel
# checks) and with --host-checks (the daemon acts with each caller's
# credentials and the host checks, as under fsgate-run). Every line must be
# identical, except the deliberate ones: a set-id bit cannot be made through
# the view, and under --host-checks another user's exec-only (0711) binary
# is refused, and with the writeback cache a set-gid bit without group
# execute (the FUSE module's rule). A third pass uses the writeback cache (no kernel passthrough,
# as in an unprivileged fsgate-run), where write-only files are written
# with direct I/O.

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

mapfile -t native < "$TESTDIR/native.txt"

# Two ways the view can check permissions: the kernel against the attributes
# it shows (default_permissions, what `fsgate mount` does by default) and
# the host with each caller's credentials (--host-checks, what fsgate-run
# does).
for mode in default-permissions host-checks host-checks-writeback; do
    opts=()
    [ $mode != default-permissions ] && opts=(--host-checks)
    # without kernel passthrough the view uses the writeback cache, as an
    # unprivileged fsgate-run does (write-only files: direct I/O)
    pt=1
    [ $mode = host-checks-writeback ] && pt=0
    rm -rf "$T/view"
    mkdir "$T/view"
    FSGATE_PASSTHROUGH=$pt "$FSGATE" mount --profile none --rw "$T/view" --xattr "${opts[@]}" -f "$TESTDIR/mnt" 2> "$TESTDIR/daemon.err" &
    DAEMON=$!
    track $DAEMON
    for _ in $(seq 200); do
        grep -q " $TESTDIR/mnt " /proc/self/mountinfo && break
        sleep 0.05
    done
    python3 "$CHECKS" "$TESTDIR/mnt$T/view" "$T/view" > "$TESTDIR/view.txt" 2> "$TESTDIR/view.err"
    is "$mode: checks run through the view" "$?:$(cat "$TESTDIR/view.err")" "0:"

    mapfile -t view < "$TESTDIR/view.txt"
    is "$mode: same number of results" "${#view[@]}" "${#native[@]}"
    for i in "${!native[@]}"; do
        n=${native[$i]} v=${view[$i]:-}
        case $n in
        "bob runs exe (0711) "*)
            # deliberate under host checks: an exec-only binary of another
            # owner is refused (EACCES = 13), since the kernel would not
            # keep it unreadable (docs/security.md, "Permissions")
            if [ $mode != default-permissions ]; then
                is "$mode: ${n%%: *}: refused, EACCES (host: ${n#*: })" "$v" "${n%%: *}: exit=113"
            else
                is "$mode: ${n%%: *}: ${n#*: }" "$v" "$n"
            fi
            ;;
        "s9 after write by another: "*)
            # the FUSE module, with the writeback cache, clears set-gid
            # only with group execute (docs/security.md, "Set-id bits on
            # write"); the host's rule may clear it without
            if [ $mode = host-checks-writeback ]; then
                is "$mode: ${n%%: *}: set-gid kept by the FUSE module (host: ${n#*: })" \
                    "$v" "$(echo "$n" | sed 's/mode=0666/mode=2666/')"
            else
                is "$mode: ${n%%: *}: ${n#*: }" "$v" "$n"
            fi
            ;;
        DIVERGE*)
            is "$mode: view strips a set-id bit made by chmod (host: ${n##*: })" \
                "${v##*: }" "$(echo "${n##*: }" | sed 's/mode=4/mode=0/')"
            ;;
        *)
            is "$mode: ${n%%: *}: ${n#*: }" "$v" "$n"
            ;;
        esac
    done
    umount "$TESTDIR/mnt"
    wait $DAEMON
    DAEMON=
done

done_testing
