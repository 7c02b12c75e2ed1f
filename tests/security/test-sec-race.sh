#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# TOCTOU against the daemon through the real fsgate-run [row 8 of the threat table in docs/security.md]:
# for 10 s, a directory is swapped with a symlink to a deny-read directory
# (renameat2 RENAME_EXCHANGE), by two threads on the host and one through
# the view, while three threads in the sandbox read through the swapped
# name and through a directory fd kept open. No read may ever return the
# secret, and the host files must be unchanged.
. "$(dirname "$0")/../run/libtest.sh"
require_fsgate

SEC_PROBE=${SEC_PROBE:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/tests/security/sec-probe}
SECRET="TOPSECRET-$MARK"
SECS=${FSGATE_RACE_SECONDS:-10}

mkdir -p "$WORK/swap" "$WORK/private"
echo public > "$WORK/swap/data"
echo "$SECRET" > "$WORK/private/data"
ln -s private "$WORK/swap.alt"

"$SEC_PROBE" race "$WORK/swap" "$WORK/swap.alt" "$WORK/swap/data" "$SECS" 2 0 > "$TESTDIR/host.out" &
hp=$!; track $hp
out=$(run_fsg --deny-read "$WORK/private" -- "$SEC_PROBE" race swap swap.alt swap/data "$SECS" 1 3 2>&1)
wait $hp
diag "sandbox: $out; host: $(cat "$TESTDIR/host.out")"
leaks=$(sed -n 's/.*leaks=\([0-9]*\).*/\1/p' <<<"$out")
reads=$(sed -n 's/.*reads=\([0-9]*\).*/\1/p' <<<"$out")
swaps=$(sed -n 's/.*swaps=\([0-9]*\).*/\1/p' <<<"$out")
hswaps=$(sed -n 's/.*swaps=\([0-9]*\).*/\1/p' "$TESTDIR/host.out")
is "[8] ${SECS}s symlink swap race, 3 host/view swappers and 3 readers: no read returned the secret" "$leaks" "0"
check "[8] ... the race really ran (view swaps $swaps, host swaps $hswaps, good reads $reads)" \
  test "${swaps:-0}" -gt 100 -a "${hswaps:-0}" -gt 100 -a "${reads:-0}" -gt 100
check "[8] ... the secret never appeared in the output" bash -c '! grep -q "$1" <<<"$2"' _ "$SECRET" "$out"
is "[8] ... the host files are unchanged" "$(cat "$WORK/private/data" "$WORK/swap/data" "$WORK/swap.alt/data" 2>&1 | sort | tr '\n' ' ')" \
  "$SECRET $SECRET public "
is "[8] ... and no FUSE mount is left" "$(fsg_mounts)" "0"
done_testing
