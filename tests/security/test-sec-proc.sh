#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Process attacks through the real fsgate-run (security suite), beyond
# tests/run/test-run-escape.sh: the FUSE daemon and fsgate-run are out of
# reach (ptrace, process_vm_readv, pidfd, kill, /proc), leaked fds of every
# kind are closed, the rest of the new mount API is refused, the old root is
# gone, host IPC and pathname sockets are unreachable, exit-code spoofing is
# told apart in the report. Rows of the threat table in docs/security.md
# are named in brackets.
. "$(dirname "$0")/../run/libtest.sh"
require_fsgate

SEC_PROBE=${SEC_PROBE:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/tests/security/sec-probe}
SECRET="TOPSECRET-$MARK"
echo "$SECRET" > "$TESTDIR/outside-secret"

# --- [14,15,13,24] the daemon and fsgate-run, by their host pids -------------------------------
# The command waits for the host to tell it the daemon's pid, then attacks it.
rm -f "$WORK/pids"
"$FSGATE_RUN" -- sh -c '
  SEC_PROBE=$1 TRY_SYSCALL=$2
  while [ ! -s pids ]; do sleep 0.05; done; read d r < pids
  for p in $d $r; do
    for c in "process_vm_readv $p" "pidfd_open $p" "pidfd_getfd $p 3"; do "$SEC_PROBE" $c; done
    "$TRY_SYSCALL" ptrace $p; "$TRY_SYSCALL" kill $p
    for f in root cwd exe fd/3 map_files mem environ; do
      if [ -e /proc/$p/$f ] || [ -L /proc/$p/$f ]; then echo "visible:$f"; else echo ENOENT; fi
    done
  done
  kill -9 -1 2>/dev/null; cat /etc/hostname >/dev/null && echo view-ok' sh "$SEC_PROBE" "$TRY_SYSCALL" > "$TESTDIR/daemon.out" 2>&1 &
rp=$!; track $rp
daemon=""
# the command is waiting for us: it started, so the daemon is serving
wait_until pgrep -P $rp -x fsgate-fuse >/dev/null && daemon=$(pgrep -P $rp -x fsgate-fuse)
if [ -n "$daemon" ]; then
  echo "$daemon $rp" > "$WORK/pids"
  wait $rp; rc=$?
  expect=$(for i in 1 2; do printf '%s\n' ESRCH ESRCH ESRCH ESRCH ESRCH ENOENT ENOENT ENOENT ENOENT ENOENT ENOENT ENOENT; done; echo view-ok)
  is "[14,15,13,24] process_vm_readv/pidfd_open/pidfd_getfd/ptrace/kill and /proc/PID/{root,cwd,exe,fd,map_files,mem,environ} of the daemon and of fsgate-run: ESRCH/ENOENT" \
    "$(cat "$TESTDIR/daemon.out")" "$expect"
  is "[15,39] ... the run ended normally after kill -9 -1 inside" "$rc" "0"
else
  not_ok "found the fsgate-fuse daemon of the run"
fi

# --- [13,14] the sandbox init (pid 1) ------------------------------------------------------------
out=$(run_fsg -- sh -c "'$SEC_PROBE' process_vm_readv 1; '$SEC_PROBE' pidfd_getfd 1 0; ls /proc/1/root/ >/dev/null 2>&1 && echo root-visible || echo denied; readlink /proc/1/exe || echo denied" 2>/dev/null)
is "[13,14,24] process_vm_readv, pidfd_getfd, /proc/1/root and /proc/1/exe of the sandbox init fail" "$out" "EPERM
EPERM
denied
denied"

# --- [39] kill -9 -1 inside: a host canary and the daemon survive ---------------------------------
sleep $MARK & canary=$!; track $canary
rm -f "$WORK/ready-k" "$WORK/go-k"
"$FSGATE_RUN" -- sh -c 'sleep 5 & touch ready-k; while [ ! -e go-k ]; do sleep 0.02; done
  kill -9 -1 2>/dev/null; cat /etc/hostname > /dev/null && echo still-served' > "$TESTDIR/k.out" 2>&1 &
rp=$!; track $rp
wait_for "$WORK/ready-k"
daemon=$(pgrep -P $rp -x fsgate-fuse)
touch "$WORK/go-k"
wait $rp; rc=$?
check "[39] ... the daemon was there and is gone with the run" test -n "$daemon" -a ! -e "/proc/$daemon/status"
check "[39] kill -9 -1 inside: the host canary survives" kill -0 $canary
is "[39] ... the view is still served after it (daemon untouched) and the run ends with 0" "$(cat "$TESTDIR/k.out") $rc" "still-served 0"
check "[39] ... the daemon was a separate host process ($daemon)" test -n "$daemon"

# --- [12,31] leaked fds of every kind ---------------------------------------------------------------
python3 - "$TESTDIR/host.sock" <<'PY' & lp=$!
import socket, sys, os
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
log = open(sys.argv[1] + ".log", "a")
while True:
    c, _ = s.accept(); log.write("conn\n"); log.flush(); c.close()
PY
track $lp
wait_until test -S "$TESTDIR/host.sock"
touch "$TESTDIR/host.sock.log" "$TESTDIR/outside-file"
exec 9</etc 10>>"$TESTDIR/outside-file" 11<"$TESTDIR/outside-secret"
exec 12< <(sleep 30) # a pipe
track $!
out=$(python3 -c '
import socket, sys, os
c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); os.dup2(c.fileno(), 13); c.detach()
os.set_inheritable(13, True)
os.execvp(sys.argv[2], sys.argv[2:])' "$TESTDIR/host.sock" timeout 60 "$FSGATE_RUN" -- sh -c '
TRY_SYSCALL=$1
cat /proc/self/fd/9/passwd 2>/dev/null | head -c 4 || true; echo
for f in 9 10 11 12 13; do "$TRY_SYSCALL" fstat-fd $f; done
"$TRY_SYSCALL" openat-fd 9 ..
ls /proc/self/fd | tr "\n" " "' sh "$TRY_SYSCALL" 2>&1)
exec 9<&- 10>&- 11<&- 12<&-
is "[12,31] leaked dir fd (/proc/self/fd/9/passwd), file, secret, pipe and connected socket fds are all closed" "$out" "
EBADF
EBADF
EBADF
EBADF
EBADF
EBADF
0 1 2 3 "
is "[12] ... the outside file is unchanged and the secret never appeared" "$(cat "$TESTDIR/outside-file")$(grep -c "$SECRET" <<<"$out")" "0"

# --- [30,29] a host pathname unix socket visible in the view ------------------------------------------
# the [12] check above connected once: wait for the listener to log it
wait_until grep -q conn "$TESTDIR/host.sock.log"; : > "$TESTDIR/host.sock.log"
out=$(run_fsg -- python3 -c '
import socket, sys, errno
c = socket.socket(socket.AF_UNIX)
try: c.connect(sys.argv[1]); print("connected")
except OSError as e: print(errno.errorcode[e.errno])' "$TESTDIR/host.sock" 2>&1)
is "[30] a host pathname unix socket seen through the view is not connectable" "$out" "ECONNREFUSED"
out=$(run_fsg --net -- python3 -c '
import socket, sys, errno
c = socket.socket(socket.AF_UNIX)
try: c.connect(sys.argv[1]); print("connected")
except OSError as e: print(errno.errorcode[e.errno])' "$TESTDIR/host.sock" 2>&1)
is "[30] ... also with --net" "$out" "ECONNREFUSED"
out=$(run_fsg -- sh -c 'ls -A /run/ /var/run/ 2>&1 | grep -v ":$" | grep -c . ; touch /run/x 2>/dev/null && echo writable || echo read-only')
is "[30] /run and /var/run (host daemon sockets) show nothing of the host, read-only" "$out" "0
read-only"
is "[30] ... and under fsgate mount the policy denies them" \
  "$("${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/fsgate/fsgate" explain --mount /run/dbus /var/run/dbus | awk '{print $1}' | tr '\n' ' ')" "deny deny "
# stop the listener: whatever it accepted is in its log by then
kill $lp 2>/dev/null; wait $lp 2>/dev/null
is "[30] ... the host socket received nothing" "$(cat "$TESTDIR/host.sock.log")" ""

# --- [10,11,23] the rest of the new mount API --------------------------------------------------------------------
for c in move_mount fsconfig fspick mount_setattr; do
  is "[10] $c fails" "$(run_fsg -- "$SEC_PROBE" $c)" "EPERM"
done

# --- [22] the old root is gone ---------------------------------------------------------------------------------
out=$(FSGATE_HYBRID=0 run_fsg -- sh -c 'awk "{for (i = 7; i <= NF; i++) if (\$i == \"-\") print \$(i + 1)}" /proc/self/mountinfo | sort -u | tr "\n" " "; ls -d /tmp/oldroot /oldroot /.oldroot 2>/dev/null')
fstype=$(findmnt -no FSTYPE / 2>/dev/null)
check "[22] FSGATE_HYBRID=0: no host filesystem is mounted inside, only the view and the sandbox's own ($out; host / is $fstype)" \
  test -z "$(tr ' ' '\n' <<<"$out" | grep -vxE 'fuse|proc|tmpfs|devtmpfs|devpts|')"
# With the hybrid view (on by default), every other mount is one of the
# read-only binds that -v announces (a hole such as /usr/local inside one
# is the view's own fuse), and nothing of the old root is left.
out=$(FSGATE_HYBRID=1 run_fsg -v -- sh -c 'awk "{for (i = 7; i <= NF; i++) if (\$i == \"-\") print \$5, \$6, \$(i + 1)}" /proc/self/mountinfo; ls -d /tmp/oldroot /oldroot /.oldroot 2>/dev/null' 2>&1)
bound=" $(grep -o 'hybrid view: .* bound read-only (.*); the daemon serves' <<<"$out" |
  sed 's/.*read-only (//; s/); the daemon serves$//; s/ (less [^)]*)//g') "
bad=$(grep -v '^fsgate-run: ' <<<"$out" | while read -r point opts fs; do
  case $fs in fuse|proc|tmpfs|devtmpfs|devpts) continue ;; esac
  [[ "$bound" == *" $point "* && "$opts" == ro,nosuid,nodev* ]] || echo "$point $opts $fs"
done)
check "[22] hybrid view: the only host filesystems inside are the announced read-only, nosuid, nodev binds (${bad:-none other})" \
  test -z "$bad" -a "$bound" != "  "

# --- [42] host IPC, /dev/shm ---------------------------------------------------------------------------------------
if command -v ipcmk >/dev/null && command -v ipcs >/dev/null; then
  shmid=$(ipcmk -M 4096 2>/dev/null | grep -o '[0-9]*$')
  echo "$SECRET" > "/dev/shm/fsgate-test-$MARK"
  out=$(run_fsg -- sh -c "ipcs -m | grep -c '^0x' ; ls /dev/shm | wc -l")
  [ -n "$shmid" ] && ipcrm -m "$shmid"
  rm -f "/dev/shm/fsgate-test-$MARK"
  is "[42] host SysV shared memory and /dev/shm files are not visible (IPC namespace, private /dev/shm)" "$out" "0
0"
else
  skip "[42] host SysV shared memory is not visible" "ipcmk and ipcs"
fi

# --- [43] core_pattern and other global sysctls -------------------------------------------------
# A root run is the host's uid 0 without capabilities, and sysctl
# permissions are checked on the uid alone. The probes only open for
# writing (and write nothing), so a regression does not change the host.
out=$(run_fsg -- python3 -c '
import errno, os
for p in ("/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sys/vm/drop_caches",
          "/proc/irq/default_smp_affinity", "/proc/sysrq-trigger"):
    try: os.close(os.open(p, os.O_WRONLY)); print("writable")
    except OSError as e: print("EROFS" if e.errno == errno.EROFS or (e.errno == errno.ENOENT and not os.path.exists(p)) else errno.errorcode[e.errno])' 2>&1)
is "[43] /proc/sys (core_pattern, modprobe, drop_caches), /proc/irq and /proc/sysrq-trigger are read-only for a root run" "$out" "EROFS
EROFS
EROFS
EROFS
EROFS"

# --- [31] more socket families ---------------------------------------------------------------------------------------
for fam in 44 41 30 16; do # AF_XDP AF_KCM AF_TIPC AF_NETLINK(raw)
  is "[31] socket(family $fam) fails with EACCES" "$(run_fsg -- python3 -c "
import socket, errno
try: socket.socket($fam, socket.SOCK_RAW, 0); print('OK')
except OSError as e: print(errno.errorcode[e.errno])" 2>&1)" "EACCES"
done

# --- [40] exit-code spoofing ------------------------------------------------------------------------------------------
for code in 124 125 137; do
  run_fsg --json "$TESTDIR/x$code.json" -- sh -c "exit $code"; rc=$?
  is "[40] a command exiting $code by itself: status $code, report says exited (not timeout/setup/signal)" \
    "$rc $(json_get "$TESTDIR/x$code.json" '(r["reason"], r["timed_out"], r["signal"])')" "$code ('exited', False, None)"
done

# --- [34] a host terminal on stdout/stderr never reaches the command ---------------------------------------------------
# stdin is a pipe (so no pty of its own), stdout and stderr are a terminal that stands for
# the user's: the command must see pipes, and what the user types must stay unread.
out=$(python3 - "$FSGATE_RUN" <<'PY'
import os, pty, select, subprocess, sys, time
m, s = pty.openpty()
cmd = 'readlink /proc/self/fd/1; readlink /proc/self/fd/2; python3 -c "import os; print(\'read:\', os.read(1, 100))" 2>&1 | head -c 40'
p = subprocess.Popen([sys.argv[1], "--", "sh", "-c", cmd], stdin=subprocess.PIPE, stdout=s, stderr=s)
time.sleep(1)
os.write(m, b"user typed password\n")
p.stdin.close(); p.wait(timeout=20); os.close(s)
out = b""
while select.select([m], [], [], 0.3)[0]:
    try: out += os.read(m, 4096)
    except OSError: break
text = out.decode(errors="replace").replace("\r", "")
print("pipe" if text.count("pipe:[") >= 2 else "TTY", "leak" if "read: b'user" in text else "no-leak")
PY
)
is "[34] stdout/stderr on the user's terminal with stdin piped: the command gets pipes and reads nothing typed" "$out" "pipe no-leak"

# --- [40] a command-chosen process name cannot break the report ---------------------------------------------------
run_fsg --json "$TESTDIR/comm.json" -- python3 -c "
import ctypes, socket
ctypes.CDLL(None).prctl(15, b'\xff\xfe\x1b[2J', 0, 0, 0)
try: socket.socket(socket.AF_INET)
except OSError: pass" >/dev/null 2>&1
is "[40] a non-UTF-8 process name in a refused socket(): the report stays valid JSON with the denial" \
  "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1], encoding="utf-8")); print(len([x for x in d["denials"] if x.get("source")=="seccomp"]) >= 1)' "$TESTDIR/comm.json" 2>&1)" "True"

# --- [16] a reader that stops reading does not stop the timeout --------------------------------------------------------
for mode in "" "--capture --json $TESTDIR/stall.json"; do
  start=$(date +%s%N)
  { "$FSGATE_RUN" $mode --timeout 1s --kill-after 1s -- sh -c 'head -c 300000 /dev/zero; while :; do :; done'; echo "$? $(date +%s%N)" > "$TESTDIR/stall.rc"; } | { sleep 4; cat >/dev/null; }
  read rc end < "$TESTDIR/stall.rc"
  label=${mode%% *}
  is "[16] ${label:-no capture}: a stalled stdout reader: the run still times out (124) within 3 s" \
    "$rc $(( (end - start) / 1000000000 < 3 ))" "124 1"
done

check "[*] the secret never appeared in any output" bash -c '! grep -q "$1" "$2"' _ "$SECRET" "$TESTDIR/daemon.out"
done_testing
