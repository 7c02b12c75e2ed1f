#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# `fsgate mount --stats FILE`: the per-operation table is written on SIGUSR1
# while the view is mounted (the counts so far) and again at unmount, with
# one row per operation that was requested and the daemon's CPU time.
# `--stats -` appends to standard error and never truncates it.

TMPDIR=${FSGATE_STATS_TMPDIR:-/var/tmp}
. "$(dirname "$0")/../run/libtest.sh"

FSGATE=${FSGATE:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/fsgate/fsgate}

if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ]; then
  skip "fsgate mount --stats" "root and /dev/fuse"
  done_testing
fi

MNT=$TESTDIR/mnt
DATA=$TESTDIR/data
STATS=$TESTDIR/stats.txt
mkdir -p "$MNT" "$DATA"
DAEMON=
_stats_cleanup () {
  [ -n "$DAEMON" ] && kill -TERM "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null
  grep -q " $MNT " /proc/self/mountinfo && umount -l "$MNT"
  _cleanup
}
trap _stats_cleanup EXIT

# wait_for PATTERN FILE: up to 5 s for a line matching PATTERN.
wait_for () {
  for _ in $(seq 50); do grep -qE "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
# row OP FILE: the requests column of OP's row, or 0.
row () { awk -v op="$1" '$1 == op { n = $2 } END { print n + 0 }' "$2"; }

"$FSGATE" mount --profile none --rw "$DATA" --stats "$STATS" -f "$MNT" 2>"$TESTDIR/err" &
DAEMON=$!
track "$DAEMON"
for _ in $(seq 100); do mountpoint -q "$MNT" && break; sleep 0.05; done
check "mounted" mountpoint -q "$MNT"

echo hi > "$MNT$DATA/f"
cat "$MNT$DATA/f" >/dev/null
kill -USR1 "$DAEMON"
check "SIGUSR1 writes the table so far" wait_for '^total ' "$STATS"
cp "$STATS" "$TESTDIR/snap1"
is "SIGUSR1: one CREATE so far" "$(row CREATE "$TESTDIR/snap1")" 1
is "SIGUSR1: no UNLINK yet" "$(row UNLINK "$TESTDIR/snap1")" 0
check "SIGUSR1 did not stop the daemon" kill -0 "$DAEMON"
check "CPU time is measured with --stats" \
  grep -qE '^CREATE +1 +[0-9]+\.[0-9] +[0-9]+\.[0-9]{2}$' "$TESTDIR/snap1"

rm "$MNT$DATA/f"
mkdir "$MNT$DATA/d"
rmdir "$MNT$DATA/d"
umount "$MNT"
wait "$DAEMON"
is "the daemon exits 0 after the unmount" "$?" 0
DAEMON=
first=$(head -1 "$STATS")
check "summary line: $first" \
  grep -qE '^fsgate mount: [0-9]+ requests in [0-9.]+ s served, 0 denied; data path: ' <<<"$first"
is "at unmount: UNLINK, MKDIR and RMDIR counted once each" \
  "$(row UNLINK "$STATS") $(row MKDIR "$STATS") $(row RMDIR "$STATS")" "1 1 1"
is "at unmount: still one CREATE" "$(row CREATE "$STATS")" 1
is "the file holds one table (rewritten, not appended)" "$(grep -c '^total ' "$STATS")" 1
check "counts only grow between the snapshots" \
  awk 'NR == FNR { if (FNR > 2) a[$1] = $2; next } FNR > 2 && ($1 in a) && $2 < a[$1] { bad = 1 } END { exit bad }' \
  "$TESTDIR/snap1" "$STATS"

# --stats - appends to standard error and keeps what was there.
echo "earlier log line" > "$TESTDIR/stderr.log"
"$FSGATE" mount --profile none --ro "$DATA" --stats - -f "$MNT" 2>>"$TESTDIR/stderr.log" &
DAEMON=$!
track "$DAEMON"
for _ in $(seq 100); do mountpoint -q "$MNT" && break; sleep 0.05; done
ls "$MNT$DATA" >/dev/null
kill -USR1 "$DAEMON"
wait_for '^total ' "$TESTDIR/stderr.log"
umount "$MNT"
wait "$DAEMON"
DAEMON=
is "--stats -: the earlier content of standard error is kept" "$(head -1 "$TESTDIR/stderr.log")" "earlier log line"
is "--stats -: one table on SIGUSR1, one at unmount" "$(grep -c '^total ' "$TESTDIR/stderr.log")" 2
done_testing
