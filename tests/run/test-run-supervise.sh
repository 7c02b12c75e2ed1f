#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The supervising process of fsgate-run (integration suite, issue 14): signals
# sent to fsgate-run's process group reach the command (its trap runs) and
# never the sandbox machinery; a stalled reader of the output does not stop
# the supervisor (signals, seccomp notifications and the audit pipe are still
# served); the terminal filter for untrusted commands. Item numbers of the
# issue are in brackets.
. "$(dirname "$0")/libtest.sh"
require_fsgate

# wait_file FILE: wait (at most 20 s) until FILE exists
wait_file () { local i; for i in $(seq 400); do [ -e "$1" ] && return 0; sleep 0.05; done; return 1; }

# --- [7] SIGINT/SIGTERM/SIGHUP to fsgate-run's process group --------------------------------
# fsgate-run leads its own process group (setsid), as under a shell with job
# control or a CI runner; the signal goes to the whole group, as ^C without a
# pty, a CI cancel or a hangup do. `env --default-signal`: a background job
# of a script starts with SIGINT ignored, which would hide the bug.
for sig in INT TERM HUP; do
  rm -f "$WORK/ready" "$WORK/trapped"
  env --default-signal setsid "$FSGATE_RUN" --json "$TESTDIR/sig-$sig.json" -- bash -c \
    'trap "echo trapped-$1 > trapped; exit 7" '$sig'; echo > ready; while :; do sleep 0.05; done' \
    bash $sig </dev/null >/dev/null 2>"$TESTDIR/sig-$sig.err" &
  pid=$!; track $pid
  wait_file "$WORK/ready" && kill -$sig -- -$pid
  timeout 20 tail --pid=$pid -f /dev/null; kill -KILL $pid 2>/dev/null
  wait $pid; rc=$?
  is "[7] SIG$sig to fsgate-run's process group: the command's trap runs, exit 7" \
    "$rc/$(cat "$WORK/trapped" 2>/dev/null)" "7/trapped-$sig"
  is "[7] ... the report says the command exited (the sandbox machinery did not die)" \
    "$(json_get "$TESTDIR/sig-$sig.json" 'r["reason"], r["error"]')" "('exited', None)"
done
# positive control: the command alone, without its trap, dies of the signal
rm -f "$WORK/ready"
env --default-signal setsid "$FSGATE_RUN" -- bash -c 'echo > ready; while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1 &
pid=$!; track $pid
if wait_file "$WORK/ready"; then kill -INT -- -$pid; fi
timeout 20 tail --pid=$pid -f /dev/null; kill -KILL $pid 2>/dev/null; wait $pid; rc=$?
is "[7] control: SIGINT to the group and no trap: 130 (the command and its children got SIGINT)" "$rc" "130"

done_testing
