#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Process-level escapes (security suite): no capability, no mount changes,
# no new user namespace, no handle-based reopen, no kernel attack surface
# syscalls, no terminal injection, no leaked fds, no reach outside the pid
# namespace.
. "$(dirname "$0")/libtest.sh"
require_fsgate

t () { run_fsg -- "$TRY_SYSCALL" "$@"; }

is "mount(tmpfs) fails" "$(t mount-tmpfs /tmp)" "EPERM"
is "remounting the view read-write fails" "$(t remount-ro /)" "EPERM"
is "unmounting the view fails" "$(t umount /)" "EPERM"
is "pivot_root fails" "$(t pivot_root)" "EPERM"
is "chroot fails" "$(t chroot)" "EPERM"
is "open_tree (new mount API) fails" "$(t open_tree)" "EPERM"
is "fsopen (new mount API) fails" "$(t fsopen)" "EPERM"
is "unshare(CLONE_NEWUSER) fails" "$(t unshare-user)" "EPERM"
is "clone(CLONE_NEWUSER) fails" "$(t clone-newuser)" "EPERM"
is "clone3 is ENOSYS (its flags cannot be inspected)" "$(t clone3)" "ENOSYS"
is "unshare(CLONE_NEWNS) without capabilities fails" "$(t unshare-mount)" "EPERM"
check "unshare -Urm fails inside" bash -c '! "$FSGATE_RUN" -- unshare -Urm true 2>/dev/null'
is "setns fails" "$(t setns)" "EPERM"
is "open_by_handle_at fails" "$(t open_by_handle_at)" "EPERM"
is "name_to_handle_at fails" "$(t name_to_handle_at)" "EPERM"
for s in keyctl add_key bpf perf_event_open userfaultfd kexec_load init_module; do
  is "$s fails" "$(t $s)" "EPERM"
done
is "ptrace of the sandbox init fails" "$(t ptrace 1)" "EPERM"

# TIOCSTI through a real pseudo-terminal.
out=$(python3 - "$FSGATE_RUN" "$TRY_SYSCALL" <<'PY'
import os, pty, sys, select, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "--", "sh", "-c", sys.argv[2] + " tiocsti 0; " + sys.argv[2] + " tiocsti-highbits 0"])
buf = b""
end = time.time() + 20
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try: d = os.read(fd, 1024)
        except OSError: break
        if not d: break
        buf += d
os.waitpid(pid, 0)
print(" ".join(l for l in buf.decode(errors="replace").split() if l.startswith("E") or l == "OK"))
PY
)
is "TIOCSTI on the sandbox's own pty fails (low and high bits)" "$out" "EPERM EPERM"

exec 8<"$TESTDIR"
is "a leaked directory fd from the caller is closed" "$(t openat-fd 8 ..)" "EBADF"
exec 8<&-

sleep $MARK & sentinel=$!; track $sentinel
run_fsg -- sh -c 'kill -9 -1 2>/dev/null; true' ; rc=$?
check "kill -9 -1 inside does not reach the host" kill -0 $sentinel
is "... and the run still ends normally" "$rc" "0"
kill $sentinel; wait $sentinel 2>/dev/null

is "the FUSE daemon is not visible inside" "$(run_fsg -- sh -c 'cat /proc/[0-9]*/comm 2>/dev/null | grep -c fsgate-fuse')" "0"
is "RLIMIT_CORE is 0" "$(run_fsg -- sh -c 'ulimit -c')" "0"
done_testing
