#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Manual fidelity run (not part of `meson test`): pjdfstest through an
# fsgate writable root on a fresh tmpfs, as root, and a comparison of the
# failed subtests with the deliberate refusals listed in
# tests/fs/pjdfstest-expected.txt.
#
#   tests/fs/pjdfstest.sh BUILDDIR PJDFSTEST_DIR [passthrough|daemon] [-- MOUNT-ARGS...]
#
# PJDFSTEST_DIR is a built checkout of https://github.com/pjd/pjdfstest
# (autoreconf -ifs && ./configure && make pjdfstest); it is not shipped
# with fsgate. "daemon" sets FSGATE_PASSTHROUGH=0 (every read and write
# through the daemon); "passthrough" (the default) lets a root daemon use
# kernel FUSE passthrough. Extra arguments after -- go to `fsgate mount`
# (e.g. a policy file with `devices = allow`, see fsgate-policy(5)); the
# expectations then no longer apply, and the script only prints the
# failures.
#
# Exit status: 0 when the failures are exactly the expected ones, 1 when a
# subtest failed that is not listed (or a test file died), 2 for usage
# errors, 77 when root or /dev/fuse is missing. Subtests listed but passing
# are printed and do not fail the run. Takes about 4 minutes on 2 vCPUs.
set -u

usage () {
    echo "usage: $0 BUILDDIR PJDFSTEST_DIR [passthrough|daemon] [-- MOUNT-ARGS...]" >&2
    exit 2
}
[ $# -ge 2 ] || usage
BUILD=$(cd "$1" && pwd) || usage
PJD=$(cd "$2" && pwd) || usage
shift 2
MODE=passthrough
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
    MODE=$1
    shift
fi
EXTRA=()
if [ $# -gt 0 ]; then
    [ "$1" = "--" ] || usage
    shift
    EXTRA=("$@")
fi
case $MODE in
passthrough) export FSGATE_PASSTHROUGH=1 ;;
daemon) export FSGATE_PASSTHROUGH=0 ;;
*) usage ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
EXPECTED=$HERE/pjdfstest-expected.txt
FSGATE=$BUILD/fsgate/fsgate
[ -x "$FSGATE" ] || { echo "$0: no $FSGATE (build first)" >&2; exit 2; }
[ -x "$PJD/pjdfstest" ] && [ -d "$PJD/tests" ] || { echo "$0: $PJD: not a built pjdfstest checkout" >&2; exit 2; }
if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ]; then
    echo "$0: needs root and /dev/fuse" >&2
    exit 77
fi
command -v prove > /dev/null || { echo "$0: needs prove (Debian: perl)" >&2; exit 77; }

W=$(mktemp -d /tmp/fsgate-pjdfstest.XXXXXX)
DAEMON=
cleanup () {
    cd /
    [ -n "$DAEMON" ] && kill -TERM "$DAEMON" 2> /dev/null && wait "$DAEMON" 2> /dev/null
    grep -q " $W/mnt " /proc/self/mountinfo && umount -l "$W/mnt"
    grep -q " $W/tmpfs " /proc/self/mountinfo && umount -l "$W/tmpfs"
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir "$W/tmpfs" "$W/mnt"
mount -t tmpfs -o mode=0755 fsgate-pjdfstest "$W/tmpfs" || exit 1
mkdir "$W/tmpfs/root"
"$FSGATE" mount --profile none --rw "$W/tmpfs/root" --stats "$W/stats" -f "${EXTRA[@]}" "$W/mnt" 2> "$W/daemon.err" &
DAEMON=$!
for _ in $(seq 400); do
    grep -q " $W/mnt " /proc/self/mountinfo && break
    kill -0 "$DAEMON" 2> /dev/null || break
    sleep 0.05
done
grep -q " $W/mnt " /proc/self/mountinfo || { echo "$0: the view did not mount:" >&2; cat "$W/daemon.err" >&2; exit 1; }

cd "$W/mnt$W/tmpfs/root" || exit 1
start=$(date +%s)
prove -r "$PJD/tests" > "$W/prove.log" 2>&1
cd /
end=$(date +%s)
kill -TERM "$DAEMON" 2> /dev/null
wait "$DAEMON" 2> /dev/null
DAEMON=
data_path=$(sed -n 's/.*data path: \([^;]*\).*$/\1/p' "$W/stats" | head -1)

# "FILE (Wstat: ... Tests: N Failed: M)" then "  Failed tests:  1, 3-5", and
# "Parse errors: ..." for a file that died or planned differently.
awk -v pjd="$PJD/tests/" '
    /^\// && /\(Wstat:/ { file = $1; sub (pjd, "", file); if ($0 !~ /Wstat: 0 /) died[file] = 1; next }
    /^  Failed tests?:/ || (infail && /^ +[0-9]/) {
        infail = 1; s = $0; sub (/^ *Failed tests?: */, "", s); gsub (/ /, "", s)
        n = split (s, parts, ",")
        for (i = 1; i <= n; i++) {
            if (parts[i] == "") continue
            if (split (parts[i], r, "-") == 2) { for (k = r[1]; k <= r[2]; k++) print file ":" k }
            else print file ":" parts[i]
        }
        next
    }
    { infail = 0 }
    /^  Parse errors:/ { print file ":died" }
    END { for (f in died) print f ":died" }
' "$W/prove.log" | sort -u > "$W/failed.txt"

# Expected: "FILE:N[-M]  reason" lines; '#' starts a comment.
sed -e 's/#.*//' "$EXPECTED" | awk 'NF {
    split ($1, a, ":"); if (split (a[2], r, "-") == 2) { for (k = r[1]; k <= r[2]; k++) print a[1] ":" k } else print $1 }' \
    | sort -u > "$W/expected.txt"

total=$(sed -n 's/^Files=\([0-9]*\), Tests=\([0-9]*\),.*/\2/p' "$W/prove.log")
nfailed=$(wc -l < "$W/failed.txt")
echo "pjdfstest through fsgate ($MODE requested; data path: ${data_path:-unknown}): ${total:-?} subtests, $nfailed failed, $((end - start)) s"
tail -1 "$W/prove.log"
# Per test file: "FILE: N subtests (a,b,...)"; the full list goes to
# $PJDFSTEST_FAILED when set.
summary () {
    awk -F: '{ n[$1]++; l[$1] = l[$1] (l[$1] == "" ? "" : ",") $2 }
             END { for (f in n) printf "  %s: %d (%s)\n", f, n[f], (length (l[f]) > 60 ? substr (l[f], 1, 60) "..." : l[f]) }' | sort
}
[ -n "${PJDFSTEST_FAILED:-}" ] && cp "$W/failed.txt" "$PJDFSTEST_FAILED"
[ -n "${PJDFSTEST_KEEP_LOG:-}" ] && cp "$W/prove.log" "$PJDFSTEST_KEEP_LOG"
if [ ${#EXTRA[@]} -gt 0 ]; then
    echo "failed subtests (no expectations with extra mount arguments):"
    summary < "$W/failed.txt"
    exit 0
fi
unexpected=$(comm -23 "$W/failed.txt" "$W/expected.txt")
passing=$(comm -13 "$W/failed.txt" "$W/expected.txt")
echo "expected refusals: $(comm -12 "$W/failed.txt" "$W/expected.txt" | wc -l) of $(wc -l < "$W/expected.txt")"
if [ -n "$passing" ]; then
    echo "listed as refused but passing ($(echo "$passing" | wc -l)):"
    echo "$passing" | summary
fi
if [ -n "$unexpected" ]; then
    echo "UNEXPECTED failures ($(echo "$unexpected" | wc -l)):"
    echo "$unexpected" | summary
    exit 1
fi
echo "OK: only the deliberate refusals failed"
exit 0
