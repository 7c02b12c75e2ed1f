#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Faults (integration suite): the FUSE daemon killed mid-run (the command
# sees ENOTCONN/ECONNABORTED/EIO or nothing, 125 + reason, nothing left behind), fsgate-run killed,
# requests the daemon cannot answer quickly (a stopped daemon, a FIFO, a
# 30k-entry directory, a file the host keeps writing, a lock the host holds)
# never make the run unkillable, 50 concurrent runs over one writable root
# (every byte right; the daemons' peak memory is reported), and a full disk.
# Timeouts, SIGSTOP, double-fork+setsid are in test-run-lifetime.
. "$(dirname "$0")/libtest.sh"
require_fsgate

ms () { date +%s%3N; }
# (the temporary directories of test programs, this one's and those other
# suites running at the same time create and remove, are not the run's)
tmp_files () { ls -A /tmp /dev/shm 2>/dev/null | grep -i fsgate |
  grep -Ev '^fsgate-(run-test|test|pjdfstest|container-test|workload|defaults)[.-]' | sort; }
# pids of the run's helpers (children of fsgate-run and their descendants)
tree () { local p; for p in $(pgrep -P "$1"); do echo "$p"; tree "$p"; done; }
# live (not zombie: a reparented zombie is dead, waiting for its reaper) processes among PIDS
alive () { local p n=0; for p in "$@"; do
  [ "$(awk '{print $3}' /proc/"$p"/stat 2>/dev/null)" ] && [ "$(awk '{print $3}' /proc/"$p"/stat 2>/dev/null)" != Z ] && n=$((n + 1))
done; echo $n; }
SMALL="$TESTDIR/small"
trap 'umount -l "$SMALL" 2>/dev/null; _cleanup' EXIT

tmp_before=$(tmp_files)

# --- the FUSE daemon killed mid-run ------------------------------------------------------------
echo data > "$WORK/file"
"$FSGATE_RUN" --json "$TESTDIR/d.json" -- python3 -c '
import time, errno, sys
seen = set()
open("file").read(); open("ready-d", "w").close()
while True:
    try: open("file").read()
    except OSError as e:
        seen.add(errno.errorcode.get(e.errno, str(e.errno))); print(" ".join(sorted(seen)), flush=True)
    time.sleep(0.002)' > "$TESTDIR/d.out" 2>"$TESTDIR/d.err" &
rp=$!; track $rp
wait_for "$WORK/ready-d"
daemon=$(pgrep -P $rp -x fsgate-fuse); helpers=$(tree $rp)
if [ -n "$daemon" ]; then
  t0=$(ms); kill -KILL "$daemon"; wait $rp; rc=$?; t1=$(ms)
  is "daemon SIGKILL: exit 125" "$rc" "125"
  [ "$rc" = 125 ] || diag "stderr: $(cat "$TESTDIR/d.err")"
  check "... the run ends within 2 s ($((t1 - t0)) ms)" test $((t1 - t0)) -lt 2000
  is "... the report says daemon-died" "$(json_get "$TESTDIR/d.json" '(r["exit_code"], r["reason"])')" "(125, 'daemon-died')"
  # The command is killed within milliseconds, usually before its next
  # access; whatever it saw can only be the aborted connection (ENOTCONN
  # itself is asserted at the view level: fs-view /fs/sigkill).
  is "... the command saw nothing but ENOTCONN/ECONNABORTED/EIO (never a fall-through to the host tree)" \
    "$(tr ' ' '\n' < "$TESTDIR/d.out" | grep -vxE 'EIO|ENOTCONN|ECONNABORTED|')" ""
  diag "errors the command saw: $(tail -1 "$TESTDIR/d.out")"
  is "... one error line" "$(grep -c 'FUSE daemon' "$TESTDIR/d.err")" "1"
  for i in $(seq 20); do [ "$(alive $helpers)" = 0 ] && break; sleep 0.05; done
  is "... no process of the run is left" "$(alive $helpers)" "0"
  is "... no mount is left" "$(fsg_mounts)" "0"
  is "... no temporary file is left" "$(tmp_files)" "$tmp_before"
else
  not_ok "found the daemon of the run"
fi

# The command exits at once on the first error of its broken view: its own
# status must not pass for a normal exit (the run is still daemon-died).
bad=""
for k in $(seq 5); do
  "$FSGATE_RUN" --json "$TESTDIR/q.json" -- sh -c "touch ready-q$k; while cat file > /dev/null 2>&1; do :; done; exit 3" 2>/dev/null &
  rp=$!; track $rp
  wait_for "$WORK/ready-q$k"; daemon=$(pgrep -P $rp -x fsgate-fuse)
  kill -KILL "$daemon"; wait $rp; rc=$?
  r=$(json_get "$TESTDIR/q.json" 'r["reason"]' 2>/dev/null)
  [ "$rc $r" = "125 daemon-died" ] || bad="$bad [$rc $r]"
done
is "daemon SIGKILL, command exiting on the first error (5 times): always 125 daemon-died" "$bad" ""

# --- fsgate-run killed with SIGKILL -----------------------------------------------------------------
"$FSGATE_RUN" -- sh -c "sleep $MARK & touch ready-k; sleep $MARK" & rp=$!; track $rp
wait_for "$WORK/ready-k"
helpers=$(tree $rp)
kill -KILL $rp; wait $rp 2>/dev/null
for i in $(seq 20); do [ "$(alive $helpers)" = 0 ] && break; sleep 0.05; done
check "fsgate-run SIGKILL: the daemon, setup, init and command ($(wc -w <<<"$helpers") processes) are gone within 1 s" \
  test "$(alive $helpers)" = 0 -a "$(wc -w <<<"$helpers")" -ge 4
is "... no mount is left" "$(fsg_mounts)" "0"

# --- requests the daemon cannot answer quickly: the timeout still ends the run --------------------------
# bounded_run DESC SETUP-CMD RUN ARGS...: --timeout 1s --kill-after 1s must end within 1+1+2 s.
bounded () {
  local desc=$1; shift
  local t0 t1 rc
  t0=$(ms); timeout -k 5 30 "$FSGATE_RUN" --timeout 1s --kill-after 1s "$@" >/dev/null 2>&1; rc=$?; t1=$(ms)
  check "$desc: ends within timeout + kill-after + 2 s ($((t1 - t0)) ms, status $rc)" \
    test $((t1 - t0)) -lt 4000 -a "$rc" -ne 0 -a "$rc" -lt 128
  is "... nothing left" "$(survivors)" ""
}
# A stopped daemon: every request blocks until the connection is aborted.
"$FSGATE_RUN" --timeout 1s --kill-after 1s -- sh -c "touch ready-s; while :; do cat file >/dev/null; done" >/dev/null 2>&1 & rp=$!; track $rp
wait_for "$WORK/ready-s"; daemon=$(pgrep -P $rp -x fsgate-fuse); helpers=$(tree $rp)
t0=$(ms); kill -STOP "$daemon"; wait $rp; rc=$?; t1=$(ms)
check "a SIGSTOPped daemon: the run still ends ($((t1 - t0)) ms, status $rc)" test $((t1 - t0)) -lt 4000 -a "$rc" -ne 0
kill -KILL "$daemon" 2>/dev/null; kill -CONT "$daemon" 2>/dev/null
for i in $(seq 20); do [ "$(alive $helpers)" = 0 ] && break; sleep 0.05; done
is "... every process of the run is gone" "$(alive $helpers)" "0"
is "... no mount left" "$(fsg_mounts)" "0"

mkfifo "$WORK/fifo"
bounded "a FIFO opened for reading in the view" -- sh -c "cat fifo; sleep $MARK"
python3 - "$WORK/big" <<'PY'
import os, sys
os.mkdir(sys.argv[1]); fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(30000):
    os.close(os.open("f%06d" % i, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
PY
bounded "a 30k-entry directory listed over and over" -- sh -c "while :; do ls -l big > /dev/null; done"
out=$(run_fsg -- sh -c 'ls -f big | wc -l')
is "... and it lists completely (30000 + . and ..)" "$out" "30002"
rm -rf "$WORK/big"
python3 -c '
import sys, time
f = open(sys.argv[1], "a")
while True: f.write("x" * 4096); f.flush(); time.sleep(0.001)' "$WORK/growing" & wp=$!; track $wp
bounded "a file the host keeps writing, followed with tail -f" -- sh -c "tail -f growing > /dev/null; sleep $MARK"
kill $wp
touch "$WORK/lockf"
python3 -c '
import fcntl, sys, time; f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[1] + ".fheld", "w"); time.sleep(30)' "$WORK/lockf" &
lk=$!; track $lk
wait_for "$WORK/lockf.fheld"
bounded "a lock the host holds (flock)" -- sh -c "flock -x lockf true; sleep $MARK"
kill $lk
python3 -c '
import fcntl, sys, time; f = open(sys.argv[1], "r+"); fcntl.lockf(f, fcntl.LOCK_EX); open(sys.argv[1] + ".held", "w"); time.sleep(30)' "$WORK/lockf" &
lk=$!; track $lk
wait_for "$WORK/lockf.held"
bounded "a POSIX lock the host holds (F_SETLKW)" -- python3 -c '
import fcntl, time; f = open("lockf", "r+"); fcntl.lockf(f, fcntl.LOCK_EX); time.sleep(30)'
kill $lk

# --- 50 concurrent runs over one writable root ----------------------------------------------------------
mkdir -m 0777 "$WORK/shared"
rm -f "$WORK/release"
pids=()
for i in $(seq 50); do
  "$FSGATE_RUN" --rw "$WORK/shared" -- sh -c "
    seq 200 | awk '{ printf \"run$i-line%d-%0100d\\n\", \$1, \$1 }' > $WORK/shared/out.$i.tmp
    mv $WORK/shared/out.$i.tmp $WORK/shared/out.$i
    mkdir $WORK/shared/d.$i && echo $i > $WORK/shared/d.$i/f && mv $WORK/shared/d.$i $WORK/shared/dir.$i
    while [ ! -e release ]; do sleep 0.05; done" > /dev/null 2>&1 &
  pids+=($!); track $!
done
for t in $(seq 600); do [ "$(ls "$WORK/shared" | grep -c '^dir\.')" = 50 ] && break; sleep 0.05; done
hwm=0
for p in "${pids[@]}"; do
  d=$(pgrep -P "$p" -x fsgate-fuse)
  [ -n "$d" ] || continue
  k=$(awk '/^VmHWM:/ {print $2}' /proc/"$d"/status 2>/dev/null)
  [ -n "$k" ] && [ "$k" -gt "$hwm" ] && hwm=$k
done
touch "$WORK/release"
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
is "50 concurrent runs over one writable root all succeed" "$fails" "0"
bad=0
for i in $(seq 50); do
  [ "$(cat "$WORK/shared/out.$i" 2>/dev/null)" = "$(seq 200 | awk "{ printf \"run$i-line%d-%0100d\\n\", \$1, \$1 }")" ] || bad=$((bad + 1))
  [ "$(cat "$WORK/shared/dir.$i/f" 2>/dev/null)" = "$i" ] || bad=$((bad + 1))
done
is "... every byte present and correct, every rename done" "$bad" "0"
is "... no temporary names left" "$(ls "$WORK/shared" | grep -c 'tmp$\|^d\.')" "0"
check "... the daemons' peak memory (VmHWM) is known and below 64 MiB: ${hwm} kB" test "$hwm" -gt 0 -a "$hwm" -lt 65536
diag "daemon peak memory with 50 concurrent runs: max VmHWM ${hwm} kB"

# --- disk full on a writable root -----------------------------------------------------------------------------
mkdir -p "$SMALL"
if mount -t tmpfs -o size=8m fsgate-test-small "$SMALL" 2>/dev/null; then
  chmod 0777 "$SMALL"
  out=$(cd "$SMALL" && run_fsg -- python3 -c '
import os, errno
try:
    with open("big", "wb") as f:
        for i in range(20): f.write(b"x" * (1 << 20)); f.flush(); os.fsync(f.fileno())
    print("no error")
except OSError as e: print(errno.errorcode[e.errno])
os.unlink("big")
open("small", "w").write("still works"); print(open("small").read())' 2>&1); rc=$?
  is "disk full: ENOSPC reaches the command, which can then free space and go on" "$out" "ENOSPC
still works"
  is "... the run ends normally" "$rc" "0"
  is "... the host sees the result" "$(cat "$SMALL/small" 2>&1)" "still works"
  is "... no mount of ours left besides the test tmpfs" "$(fsg_mounts)" "0"
  umount -l "$SMALL"
else
  skip "disk full on a writable root" "mount -t tmpfs (root)"
fi
is "no temporary file left anywhere" "$(tmp_files)" "$tmp_before"
done_testing
