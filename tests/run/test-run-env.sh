#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Where fsgate-run runs: interactively through a pseudo-terminal, as an
# unprivileged user, nested inside `unshare -Urm` and inside bwrap, and 20
# runs at once over one writable root.
. "$(dirname "$0")/libtest.sh"
require_fsgate

# --- interactive use ------------------------------------------------------------
out=$(python3 - "$FSGATE_RUN" <<'PY'
import os, pty, sys, select, time, termios, fcntl, struct
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 101, 0, 0))
    before = termios.tcgetattr(0)
    r = os.spawnv(os.P_WAIT, sys.argv[1], [sys.argv[1], "--", "bash", "--norc", "--noprofile", "-i"])
    after = termios.tcgetattr(0)
    print("RESTORED" if before == after else "NOT-RESTORED")
    os._exit(r)
def read_until(token, t=10):
    buf = b""; end = time.time() + t
    while time.time() < end and token not in buf:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try: d = os.read(fd, 4096)
            except OSError: break
            if not d: break
            buf += d
    return buf.decode(errors="replace")
read_until(b"bash-")
os.write(fd, b"tty; test -t 0 && echo STDIN-TTY; stty size\r")
o = read_until(b"bash-")
res = []
res.append("pts" if "/dev/pts/" in o else "no-pts:" + o)
res.append("tty" if "STDIN-TTY" in o else "no-tty")
res.append("size" if "33 101" in o else "no-size:" + o)
os.write(fd, b"sleep 100\r"); time.sleep(0.5); os.write(fd, b"\x03")
o = read_until(b"bash-", 5)
res.append("ctrl-c" if "bash-" in o else "no-ctrl-c")
os.write(fd, b"sleep 100\r"); time.sleep(0.5); os.write(fd, b"\x1a")
o = read_until(b"bash-", 5)
res.append("ctrl-z" if "Stopped" in o else "no-ctrl-z:" + o)
os.write(fd, b"fg\r"); time.sleep(0.5); os.write(fd, b"\x03")
o = read_until(b"bash-", 5)
res.append("fg" if "sleep 100" in o else "no-fg:" + o)
os.write(fd, b"exit 5\r")
o = read_until(b"RESTORED", 10)
res.append("restored" if "RESTORED" in o and "NOT-RESTORED" not in o else "not-restored:" + o)
deadline = time.time() + 10
while True:
    p, st = os.waitpid(pid, os.WNOHANG)
    if p or time.time() > deadline: break
    time.sleep(0.1)
if not p:
    os.kill(pid, 9); _, st = os.waitpid(pid, 0)
res.append("exit=%d" % os.waitstatus_to_exitcode(st))
print(" ".join(res))
PY
)
is "interactive bash through a pty: tty, window size, Ctrl-C, Ctrl-Z, fg, terminal restored, status" \
  "$out" "pts tty size ctrl-c ctrl-z fg restored exit=5"

# --- unprivileged user ----------------------------------------------------------
# uid 65534 needs to open /dev/fuse. Where the host keeps it root-only, give
# the test its own world-usable node in a private mount namespace.
unpriv () {
  local fuse_wrap=""
  if [ ! -w /dev/fuse ] || [ "$(stat -c %a /dev/fuse)" != 666 ]; then
    fuse_wrap="mkdir -p $TESTDIR/devfuse && mount -t tmpfs fsgate-test $TESTDIR/devfuse &&
      mknod -m 666 $TESTDIR/devfuse/fuse c 10 229 && mount --bind $TESTDIR/devfuse/fuse /dev/fuse &&"
  fi
  unshare -m --propagation private sh -c "$fuse_wrap exec setpriv --reuid=65534 --regid=65534 --clear-groups \"\$@\"" sh "$@"
}
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  if setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$FSGATE_RUN"; then
    # The user's own workspace: in the user namespace that owns the view,
    # the kernel refuses writes to inodes of unmapped owners (docs/security.md).
    mkdir "$TESTDIR/nobody" && chown 65534:65534 "$TESTDIR/nobody"
    out=$(cd "$TESTDIR/nobody" && unpriv env HOME="$TESTDIR/nobody" \
      timeout 60 "$FSGATE_RUN" -- sh -c 'id -u; echo unpriv > by-nobody.txt; grep ^CapEff /proc/self/status' 2>&1)
    is "runs as an unprivileged user (uid maps to itself, writes in the root, no caps)" "$out" \
      "65534
CapEff:	0000000000000000"
    is "... the file belongs to the user on the host" "$(stat -c %u "$TESTDIR/nobody/by-nobody.txt" 2>/dev/null)" "65534"
    out=$(cd "$TESTDIR/nobody" && unpriv timeout 60 "$FSGATE_RUN" --quiet -- "$TRY_SYSCALL" socket-inet 2>&1)
    is "... with the network blocked" "$out" "EACCES"
  else
    skip "runs as an unprivileged user" "a build directory readable by uid 65534"
  fi
elif [ "$(id -u)" != 0 ]; then
  is "runs as an unprivileged user" "$(run_fsg -- id -u)" "$(id -u)"
else
  skip "runs as an unprivileged user" "setpriv"
fi

# --- --doctor messages (issue 12) ---------------------------------------------------
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
   setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$FSGATE_RUN"; then
  # /dev/fuse there but root-only (crw-------): the fix is its mode, not modprobe
  out=$(unshare -m --propagation private sh -c "mkdir -p $TESTDIR/fuse600 &&
      mount -t tmpfs fsgate-test $TESTDIR/fuse600 && mknod -m 600 $TESTDIR/fuse600/fuse c 10 229 &&
      mount --bind $TESTDIR/fuse600/fuse /dev/fuse &&
      exec setpriv --reuid=65534 --regid=65534 --clear-groups \"\$@\"" sh "$FSGATE_RUN" --doctor 2>&1)
  check "--doctor: /dev/fuse mode 600 names the mode and chmod 0666" \
    grep -q "FAIL  /dev/fuse: open: Permission denied (mode 0600, .*Fix: chmod 0666 /dev/fuse" <<<"$out"
  check "... and does not suggest modprobe" bash -c '! grep "/dev/fuse" <<<"$1" | grep -q modprobe' _ "$out"
else
  skip "--doctor: /dev/fuse mode 600" "root and setpriv"
fi
if [ "$(id -u)" = 0 ]; then
  # a masked /proc (as Docker masks /proc/kcore) makes a fresh /proc fail
  # (a FAIL line with --no-proc-fallback: tests/container/test-proc-fallback.sh);
  # user namespaces still work and --doctor must not say otherwise
  out=$(unshare -m --propagation private sh -c 'mount --bind /dev/null /proc/uptime && exec "$@"' sh \
    "$FSGATE_RUN" --doctor --no-proc-fallback 2>&1)
  if grep -q "FAIL  /proc: a fresh /proc is refused" <<<"$out"; then
    check "--doctor after a /proc failure does not claim user namespaces fail" \
      bash -c '! grep -q "user namespaces do not work" <<<"$1"' _ "$out"
  else
    skip "--doctor after a /proc failure" "a fresh /proc mounts even with /proc/uptime masked"
  fi
else
  skip "--doctor after a /proc failure" "root"
fi

# --- nested -------------------------------------------------------------------------
if unshare -Urm true 2>/dev/null; then
  out=$(timeout 60 unshare -Urm "$FSGATE_RUN" -- sh -c 'echo nested > nested.txt; id -u; grep ^CapEff /proc/self/status' 2>&1)
  is "nested inside unshare -Urm" "$out" "0
CapEff:	0000000000000000"
  is "... and wrote through the view" "$(cat "$WORK/nested.txt" 2>/dev/null)" "nested"
else
  skip "nested inside unshare -Urm" "unshare -Urm"
fi

if command -v bwrap >/dev/null && bwrap --dev-bind / / --unshare-user true 2>/dev/null; then
  # bwrap's own --proc covers parts of /proc with read-only mounts, and the
  # kernel then refuses any new proc mount (mount_too_revealing); bind the
  # host's instead.
  out=$(timeout 60 bwrap --dev-bind / / --unshare-user --unshare-pid --dev-bind /proc /proc --die-with-parent \
    "$FSGATE_RUN" -- sh -c 'echo inbwrap > bwrap.txt; cat bwrap.txt' 2>&1)
  is "nested inside bwrap" "$out" "inbwrap"
else
  skip "nested inside bwrap" "bwrap with user namespaces"
fi

# --- concurrency --------------------------------------------------------------------
mkdir -m 0777 "$WORK/shared"
pids=()
for i in $(seq 20); do
  run_fsg --rw "$WORK/shared" -- sh -c "
    for j in \$(seq 50); do echo run$i-line\$j >> $WORK/shared/out.$i.tmp; done
    mv $WORK/shared/out.$i.tmp $WORK/shared/out.$i" &
  pids+=($!); track $!
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
is "20 concurrent runs over one writable root all succeed" "$fails" "0"
bad=0
for i in $(seq 20); do
  [ "$(cat "$WORK/shared/out.$i" 2>/dev/null)" = "$(for j in $(seq 50); do echo run$i-line$j; done)" ] || bad=$((bad + 1))
done
is "... and every file is complete and correct" "$bad" "0"
is "... with no leftovers" "$(ls "$WORK/shared" | grep -c tmp)" "0"
done_testing
