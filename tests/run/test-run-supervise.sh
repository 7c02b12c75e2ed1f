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

# --- [9] a reader of the output that stops reading ------------------------------------------
# With --capture (or a terminal), fsgate-run copies the output itself.
# The command floods stdout (in the background) into a reader that reads
# nothing until told; meanwhile it calls socket(AF_INET) (a seccomp
# notification fsgate-run must answer), opens a denied file 20000 times (more
# than the audit pipe holds), then waits for SIGTERM with a trap. The host
# sees the marker, sends SIGTERM, sees the trap's file, and only then reads.
echo "secret-$MARK" > "$WORK/.env"
rm -f "$WORK/probed" "$WORK/trapped"
(
  env --default-signal setsid "$FSGATE_RUN" --capture --json "$TESTDIR/stall.json" -- bash -c '
    trap "echo trapped > trapped; exit 7" TERM
    head -c 50000000 /dev/zero &
    python3 -c "
import socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM); r = \"socket-allowed\"
except OSError as e:
    r = \"socket-\" + str(e.errno)
n = 0
for i in range(20000):
    try:
        open(\".env\").read()
    except OSError:
        n += 1
open(\"probed\", \"w\").write(r + \" \" + str(n))
"
    while :; do sleep 0.05; done' 2>"$TESTDIR/stall.err" &
  echo $! > "$TESTDIR/stall.pid"
  wait
) | {
  wait_file "$WORK/probed"
  kill -TERM -- -"$(cat "$TESTDIR/stall.pid")" 2>/dev/null
  wait_file "$WORK/trapped"
  cat > /dev/null
}
pid=$(cat "$TESTDIR/stall.pid"); track $pid
is "[9] stdout stalled: socket(AF_INET) is still answered (EACCES) and 20000 denials still flow" \
  "$(cat "$WORK/probed" 2>/dev/null)" "socket-13 20000"
is "[9] ... SIGTERM still reaches the command's trap" "$(cat "$WORK/trapped" 2>/dev/null)" "trapped"
is "[9] ... the run ends with the command's status, every denial counted" \
  "$(json_get "$TESTDIR/stall.json" 'r["exit_code"], r["denials_total"] >= 20001')" "(7, True)"

# a stalled reader and a timeout: the run still ends (124) and says what it could not deliver
rm -f "$WORK/ready"
( timeout -k 5 60 "$FSGATE_RUN" --capture --json "$TESTDIR/stall2.json" --timeout 1s -- sh -c 'echo > ready; head -c 50000000 /dev/zero; sleep 100' \
    2>"$TESTDIR/stall2.err"; echo $? > "$TESTDIR/stall2.rc" ) | { wait_file "$TESTDIR/stall2.rc"; cat > /dev/null; }
is "[9] stdout stalled until the end, --timeout 1s: 124" "$(cat "$TESTDIR/stall2.rc")" "124"
check "[9] ... and stderr says how many bytes were not delivered" \
  grep -q "bytes of the command's standard output were not delivered" "$TESTDIR/stall2.err"

# --- [11] terminal control sequences from an untrusted command ----------------------------------
# fsgate-run on a real pty (stdin, stdout, stderr), as in an interactive
# shell; the command writes OSC 52 (clipboard), DSR, DA and a title report
# request between plain text and colours.
on_pty () {
  python3 - "$FSGATE_RUN" "$@" <<'PY'
import os, pty, select, sys
pid, m = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        r, _, _ = select.select([m], [], [], 20)
        if not r: break
        d = os.read(m, 4096)
    except OSError:
        break
    if not d: break
    out += d
os.waitpid(pid, 0)
print(repr(out.replace(b"\r", b"")))
PY
}
cmd='printf "A\033]52;c;ZXZpbA==\007B\033[6nC\033[c\033[21t\033[1;32mD\033[0m\n"; printf "E\033]52;c;eA==\033\\\\F\n" >&2'
is "[11] control: without --filter-terminal, OSC 52 and report requests reach the terminal" \
  "$(on_pty -- sh -c "$cmd")" \
  "b'A\\x1b]52;c;ZXZpbA==\\x07B\\x1b[6nC\\x1b[c\\x1b[21t\\x1b[1;32mD\\x1b[0m\\nE\\x1b]52;c;eA==\\x1b\\\\F\\n'"
is "[11] --filter-terminal: OSC 52, DSR, DA and the title report are removed, text and colours pass" \
  "$(on_pty --filter-terminal -- sh -c "$cmd")" "b'ABC\\x1b[1;32mD\\x1b[0m\\nEF\\n'"
out=$(on_pty --filter-terminal --json "$TESTDIR/t11.json" -- sh -c "$cmd" >/dev/null; json_get "$TESTDIR/t11.json" 'r["terminal_sequences_filtered"]')
is "[11] ... the report counts the removed sequences" "$out" "5"

done_testing
