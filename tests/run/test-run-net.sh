#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Network blocking (security suite): with the network denied, every socket
# family but AF_UNIX fails with EACCES (seccomp, reported as denials), on
# every ABI; io_uring is gone; a host listener on 127.0.0.1 and a host
# abstract unix socket receive nothing; AF_UNIX inside still works.
. "$(dirname "$0")/libtest.sh"
require_fsgate

# A host TCP listener and an abstract unix listener that log every connection.
cat > "$TESTDIR/listen.py" <<'PY'
import socket, sys, threading, os
log = open(sys.argv[1], "a")
tcp = socket.socket(); tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("127.0.0.1", 0)); tcp.listen(16)
ab = socket.socket(socket.AF_UNIX); ab.bind("\0" + sys.argv[2]); ab.listen(16)
open(sys.argv[3], "w").write(str(tcp.getsockname()[1]))
def serve(s, name):
    while True:
        c, _ = s.accept(); log.write(name + "\n"); log.flush(); c.close()
threading.Thread(target=serve, args=(ab, "abstract"), daemon=True).start()
serve(tcp, "tcp")
PY
python3 "$TESTDIR/listen.py" "$TESTDIR/conn.log" "fsgate-test-$MARK" "$TESTDIR/port" & track $!
for i in $(seq 50); do [ -s "$TESTDIR/port" ] && break; sleep 0.1; done
PORT=$(cat "$TESTDIR/port")
touch "$TESTDIR/conn.log"
is "the host listener works from the host (control)" "$("$TRY_SYSCALL" connect-inet "$PORT")" "OK"
sleep 0.2; : > "$TESTDIR/conn.log"

is "connect to a host 127.0.0.1 listener: socket() fails with EACCES" \
  "$(run_fsg -- "$TRY_SYSCALL" connect-inet "$PORT")" "EACCES"
out=$(run_fsg -- python3 -c "
import socket
try:
    socket.create_connection(('127.0.0.1', $PORT), timeout=2); print('connected')
except OSError as e: print(e.errno)" 2>&1)
is "python socket to 127.0.0.1 fails with EACCES" "$out" "13"
out=$(run_fsg -- python3 -c "
import socket
try:
    socket.create_connection(('1.1.1.1', 80), timeout=2); print('connected')
except OSError as e: print(e.errno)" 2>&1)
is "python socket to a public address fails with EACCES" "$out" "13"
if command -v curl >/dev/null; then
  run_fsg -- curl -s -m 3 "http://127.0.0.1:$PORT/" >/dev/null 2>&1
  check "curl to 127.0.0.1 fails" test $? -ne 0
else
  skip "curl to 127.0.0.1 fails" "curl"
fi
out=$(run_fsg -- python3 -c "
import socket
try: socket.getaddrinfo('example.com', 80); print('resolved')
except OSError as e: print('failed')" 2>&1)
is "DNS resolution fails" "$out" "failed"

for fam in inet inet-dgram inet6 netlink packet vsock alg bluetooth inet-highbits; do
  is "socket($fam) fails with EACCES" "$(run_fsg -- "$TRY_SYSCALL" socket-$fam)" "EACCES"
done
is "socketpair(AF_INET) fails with EACCES" "$(run_fsg -- "$TRY_SYSCALL" socketpair-inet)" "EACCES"
is "socket(AF_UNIX) works" "$(run_fsg -- "$TRY_SYSCALL" socket-unix)" "OK"
is "socketpair(AF_UNIX) works" "$(run_fsg -- "$TRY_SYSCALL" socketpair-unix)" "OK"
out=$(run_fsg -- python3 -c "
import socket, os
p = os.path.abspath('s.sock')
srv = socket.socket(socket.AF_UNIX); srv.bind(p); srv.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(p); a, _ = srv.accept()
c.sendall(b'unix-ok'); print(a.recv(16).decode()); os.unlink(p)")
is "AF_UNIX sockets connect and carry data inside" "$out" "unix-ok"
is "io_uring_setup fails with ENOSYS (no socket ops via io_uring)" "$(run_fsg -- "$TRY_SYSCALL" io_uring_setup)" "ENOSYS"
# The i386 ABI through int $0x80: probe it outside the sandbox first. Where
# the kernel has no ia32 emulation (ia32_emulation=0, or none built in) the
# probe dies of SIGSEGV on the host too, and the attack is impossible.
int80_probe=$("$TRY_SYSCALL" int80-socket-unix 2>&1); int80_rc=$?
if [ "$int80_probe" = OK ]; then
  is "i386 socket(AF_UNIX) via int \$0x80 works inside (the ABI is available)" \
    "$(run_fsg -- "$TRY_SYSCALL" int80-socket-unix)" "OK"
  is "i386 socketcall(SYS_SOCKET) via int \$0x80 fails" "$(run_fsg -- "$TRY_SYSCALL" int80-socketcall)" "EACCES"
  is "i386 socket(AF_INET) via int \$0x80 fails" "$(run_fsg -- "$TRY_SYSCALL" int80-socket)" "EACCES"
else
  why="int \$0x80 is unavailable on this host (probe outside the sandbox: status $int80_rc${int80_probe:+, $int80_probe}), so the i386 attack is impossible"
  ok "i386 socketcall(SYS_SOCKET) via int \$0x80: $why"
  ok "i386 socket(AF_INET) via int \$0x80: $why"
fi
x32=$(run_fsg -- "$TRY_SYSCALL" x32-socket)
check "x32 socket(AF_INET) fails ($x32)" test "$x32" = EACCES -o "$x32" = ENOSYS
is "a host abstract unix socket is unreachable (network namespace)" \
  "$(run_fsg -- "$TRY_SYSCALL" connect-abstract "fsgate-test-$MARK")" "ECONNREFUSED"
sleep 0.3
is "the host listeners received nothing" "$(cat "$TESTDIR/conn.log")" ""

run_fsg --json "$TESTDIR/n.json" -- sh -c "'$TRY_SYSCALL' socket-inet6; '$TRY_SYSCALL' socket-netlink" >/dev/null
is "refused socket() calls are denials in the report" \
  "$(json_get "$TESTDIR/n.json" '(r["sandbox_denied"], [(d["source"], d["operation"], d["path"], d["command"]) for d in r["denials"]])')" \
  "(True, [('seccomp', 'socket', 'AF_INET6', 'try-syscall'), ('seccomp', 'socket', 'AF_NETLINK', 'try-syscall')])"

is "--net allows sockets" "$(run_fsg --net -- "$TRY_SYSCALL" socket-inet)" "OK"
is "--net reaches the host listener" "$(run_fsg --net -- "$TRY_SYSCALL" connect-inet "$PORT")" "OK"

# The network, IPC and UTS namespaces: S makes them after the FUSE mount,
# while the daemon starts (runner/run.c run_spawn), and every process of the
# sandbox is in them; with --net the network namespace is the host's.
ns_of () { readlink /proc/self/ns/net /proc/self/ns/ipc /proc/self/ns/uts | tr '\n' ' '; }
read -r host_net host_ipc host_uts <<< "$(ns_of)"
read -r in_net in_ipc in_uts <<< "$(run_fsg -- sh -c "$(declare -f ns_of); ns_of")"
check "the command's network namespace is not the host's ($in_net)" test -n "$in_net" -a "$in_net" != "$host_net"
check "... nor its IPC namespace ($in_ipc)" test -n "$in_ipc" -a "$in_ipc" != "$host_ipc"
check "... nor its UTS namespace ($in_uts)" test -n "$in_uts" -a "$in_uts" != "$host_uts"
read -r in_net in_ipc in_uts <<< "$(run_fsg --net -- sh -c "$(declare -f ns_of); ns_of")"
is "with --net the network namespace is the host's, IPC and UTS are new" \
  "$([ "$in_net" = "$host_net" ] && [ -n "$in_ipc" ] && [ "$in_ipc" != "$host_ipc" ] && [ "$in_uts" != "$host_uts" ] && echo yes)" "yes"
# When they cannot be made the command never runs: S's first unshare(2) is
# that one (strace counts per process; a daemon thread's unshare(CLONE_FS)
# failing only narrows a creation mode, and this command creates nothing).
# S fails while R sends it GO; R must still read why (5 runs: the message
# was lost in one run of six when R gave up on the socket's ECONNRESET).
if command -v strace >/dev/null; then
  results=
  for i in 1 2 3 4 5; do
    out=$(strace -f -qq -o /dev/null -e trace=unshare -e inject=unshare:error=EPERM:when=1 \
          "$FSGATE_RUN" -- echo ran 2>&1); rc=$?
    results+="$rc/$(grep -c '^ran$' <<< "$out")/$(grep -c 'setup failed while creating the network, IPC and UTS namespaces' <<< "$out") "
  done
  is "the network namespace cannot be made: 125, the command never runs, the step is named (5 runs)" \
    "$results" "125/0/1 125/0/1 125/0/1 125/0/1 125/0/1 "
  strace -f -qq -o /dev/null -e trace=unshare -e inject=unshare:error=EPERM:when=1 \
    "$FSGATE_RUN" --json "$TESTDIR/nons.json" -- true 2>/dev/null
  is "... the report: setup-error, nothing bound (I never ran)" \
    "$(json_get "$TESTDIR/nons.json" '(r["reason"], r["exit_code"], (r["hybrid"] or {}).get("bound"))')" "('setup-error', 125, [])"
else
  skip "no network namespace, no run" "strace"
fi
done_testing
