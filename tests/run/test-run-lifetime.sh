#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Process lifetime: timeouts kill the whole tree (also processes that ignore
# SIGTERM, are stopped, or double-fork and setsid), a grandchild holding the
# output pipe does not hang the run, signals are forwarded, a killed runner
# takes the tree with it, and a dead FUSE daemon ends the run with 125.
. "$(dirname "$0")/libtest.sh"
require_fsgate

ms () { date +%s%3N; }

t0=$(ms)
run_fsg --timeout 1s --kill-after 1s --json "$TESTDIR/t.json" -- \
  sh -c "(trap '' TERM; exec sleep $MARK) & trap '' TERM; sleep $MARK; wait"
rc=$?; t1=$(ms)
is "timeout gives 124" "$rc" "124"
check "... after timeout + kill-after, not much later ($((t1 - t0)) ms)" test $((t1 - t0)) -lt 4000 -a $((t1 - t0)) -ge 1000
is "... the report says timed_out" "$(json_get "$TESTDIR/t.json" '(r["timed_out"], r["exit_code"], r["reason"])')" "(True, 124, 'timeout')"
is "... and no process survives (grandchild ignoring SIGTERM)" "$(survivors)" ""

run_fsg --timeout 1s --kill-after 500ms -- sh -c "sleep $MARK & kill -STOP \$\$"
is "a stopped command times out with 124" "$?" "124"
is "... and is gone" "$(survivors)" ""

run_fsg --timeout 1s -- sh -c "setsid sh -c 'sleep $MARK & exit' & sleep $MARK"
is "double-fork + setsid: 124" "$?" "124"
is "... and gone" "$(survivors)" ""

t0=$(ms)
out=$(run_fsg -- sh -c "(sleep $MARK &); echo started")
t1=$(ms)
is "a grandchild holding stdout does not hang the run" "$out" "started"
check "... the run returns at once ($((t1 - t0)) ms)" test $((t1 - t0)) -lt 2500
is "... and the grandchild is gone with the run" "$(survivors)" ""

out=$(run_fsg --capture --json "$TESTDIR/g.json" -- sh -c "(sleep $MARK &); echo started")
is "same with --capture" "$(json_get "$TESTDIR/g.json" 'repr(r["stdout"])')" "'started\\n'"

# Signals to fsgate-run reach the command.
"$FSGATE_RUN" -- sh -c "touch ready-term; sleep $MARK" & rp=$!; track $rp
wait_for "$WORK/ready-term"
kill -TERM $rp; wait $rp; rc=$?
is "SIGTERM to fsgate-run is forwarded (128+15)" "$rc" "143"
is "... nothing left" "$(survivors)" ""

"$FSGATE_RUN" -- sh -c "trap 'exit 7' INT; touch ready-int; sleep $MARK & wait" & rp=$!; track $rp
wait_for "$WORK/ready-int"
kill -INT $rp; wait $rp; rc=$?
is "SIGINT is forwarded and the command's handler decides the status" "$rc" "7"

# fsgate-run killed: everything goes within 1 s.
"$FSGATE_RUN" -- sh -c "sleep $MARK & touch ready-kill; sleep $MARK" & rp=$!; track $rp
wait_for "$WORK/ready-kill"
kill -KILL $rp; wait $rp 2>/dev/null
for i in $(seq 20); do [ -z "$(survivors)" ] && break; sleep 0.05; done
is "fsgate-run killed with SIGKILL: no process survives after 1 s" "$(survivors)" ""
check "... and no fsgate helper process either" test -z "$(pgrep -f 'fsgate-(fuse|setup|init)' | xargs -r ps -o pid=,ppid= -p | awk -v p=$rp '$2==p')"

# fsgate-run signals only its own children by pid (S and D, whose pids
# cannot be reused before it reaps them) and I, S's child, only through
# the pidfd S took: I's pid is free once S reaped it, and a kill() to it
# could hit any process. Traced: an ordinary run, a timeout that needs
# SIGKILL (kill deadline), a forwarded signal.
if command -v strace >/dev/null; then
  traced () { timeout -k 5 60 strace -f -qq -e trace=kill,pidfd_send_signal,clone,clone3,fork,vfork \
                -e signal=none -o "$@"; }
  for case in plain:0 timeout:124 signal:143; do
    want=${case#*:} case=${case%:*}
    log="$TESTDIR/strace-$case.log"
    case $case in
      plain) traced "$log" "$FSGATE_RUN" -- true; rc=$? ;;
      timeout) traced "$log" "$FSGATE_RUN" --timeout 1s --kill-after 1s -- sh -c "trap '' USR1 TERM; sleep $MARK"; rc=$? ;;
      signal) traced "$log" "$FSGATE_RUN" -- sh -c "touch ready-strace; sleep $MARK" & sp=$!; track $sp
              wait_for "$WORK/ready-strace"
              kill -TERM "$(awk 'NR == 1 { print $1 }' "$log")"; wait $sp; rc=$? ;; # R: the log's first pid
    esac
    is "$case run under strace: exit $want" "$rc" "$want"
    # R is the first process of the log; its children are what its clones returned
    bad=$(awk 'NR == 1 { r = $1 }
               $1 == r && $2 ~ /^(clone|clone3|fork|vfork)\(/ && $NF ~ /^[0-9]+$/ { kids[$NF] = 1 }
               $1 == r && $2 == "<..." && $3 ~ /^(clone|clone3|fork|vfork)$/ { kids[$NF] = 1 } # a call strace split
               $1 == r && $2 ~ /^kill\(/ { t = $2; sub(/^kill\(/, "", t); sub(/,.*/, "", t);
                                          if (!(t in kids)) print $0 }' "$log")
    is "... fsgate-run kill()s only its own children" "$bad" ""
    [ "$case" = plain ] || check "... and signals the sandbox's init through its pidfd" \
      grep -Eq "^[0-9]+ +pidfd_send_signal\\(" "$log" # strace pads pids to 5 columns
  done
else
  skip "fsgate-run kill()s only its own children" "strace"
fi

# The FUSE daemon dies during the run: exit 125, distinct reason.
echo data > "$WORK/file"
"$FSGATE_RUN" --json "$TESTDIR/d.json" -- sh -c "touch ready-d; while cat file >/dev/null; do sleep 0.1; done; echo 'view gone' >&2; sleep $MARK" 2>"$TESTDIR/d.err" &
rp=$!; track $rp
wait_for "$WORK/ready-d"
daemon=$(pgrep -P $rp -x fsgate-fuse)
if [ -n "$daemon" ]; then
  t0=$(ms)
  kill -KILL "$daemon"
  wait $rp; rc=$?; t1=$(ms)
  is "FUSE daemon killed mid-run: exit 125" "$rc" "125"
  check "... within 2 s ($((t1 - t0)) ms)" test $((t1 - t0)) -lt 2000
  is "... reported as daemon-died" "$(json_get "$TESTDIR/d.json" 'r["reason"]')" "daemon-died"
  check "... with a one-line message" grep -q "FUSE daemon" "$TESTDIR/d.err"
  is "... nothing left" "$(survivors)" ""
else
  not_ok "found the fsgate-fuse daemon of the run"
fi

done_testing
