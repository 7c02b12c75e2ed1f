#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Who checks permissions under fsgate-run: the host, with the caller's
# credentials (docs/security.md, "Permissions"). The same probe runs as an
# unprivileged user natively and through fsgate-run, on two copies of the
# same fixture, and must give the same answers and leave the same files:
# a directory of the user's whose group is not the user's (unmapped in the
# sandbox), a group-writable directory of root's through a supplementary
# group (unmapped too), a mode 0200 file (the writeback cache would read
# it), root's file and directory in the user's directory (removable, not
# writable), a root-owned directory (still refused). As root: access(W_OK) says
# EROFS in read-only places, as a read-only bind mount does.
. "$(dirname "$0")/libtest.sh"
require_fsgate

U=23456  # no passwd entry needed; not the overflow id, so a wrong owner shows
G=23457  # a supplementary group of U's
O=23459  # another user

cat > "$TESTDIR/probe.sh" <<'EOF'
cd "$1" || exit 1
r () { if "$@" 2>/dev/null; then echo ok; else echo fail; fi; }
echo "create in own dir with group root: $(r touch own-rootgrp/f)"
echo "mkdir there: $(r mkdir own-rootgrp/sub)"
echo "rename there: $(r mv own-rootgrp/f own-rootgrp/g)"
echo "unlink there: $(r rm own-rootgrp/g)"
echo "test -w own dir with group root: $(r test -w own-rootgrp)"
echo "create in root's dir, group-writable for a supplementary group: $(r touch shared/f)"
echo "create in root's 0755 dir: $(r touch rootdir/f)"
echo "test -w root's 0755 dir: $(r test -w rootdir)"
echo "overwrite 2 bytes of the 0200 file: $(r sh -c 'printf ab | dd of=wo conv=notrunc status=none')"
echo "append to the 0200 file: $(r sh -c 'printf cd >> wo')"
echo "read the 0200 file: $(r cat wo)"
echo "test -w / -r the 0200 file: $(r test -w wo) $(r test -r wo)"
echo "truncate the 0200 file with O_TRUNC: $(r sh -c 'printf xyz > wo2')"
echo "write root's 0644 file in own dir: $(r sh -c 'echo x >> rootfile')"
echo "rename root's 0644 file in own dir: $(r mv rootfile-mv rootfile-moved)"
echo "remove root's 0644 file in own dir: $(r rm -f rootfile-rm)"
echo "remove root's empty dir in own dir: $(r rmdir rootempty)"
echo "test -O another user's 0777 dir in own dir: $(r test -O otherdir)"
echo "test -O another user's file in own dir: $(r test -O otherfile)"
echo "test -O another user's file in its 0777 dir: $(r test -O otherdir/f)"
echo "test -O own dir with group root: $(r test -O own-rootgrp)"
EOF
chmod 0644 "$TESTDIR/probe.sh"

# fixture DIR: the same starting point for both runs.
fixture () {
  mkdir -p "$1" && chmod 0755 "$1" && chown $U:$U "$1"
  mkdir "$1/own-rootgrp" && chown $U:0 "$1/own-rootgrp" && chmod 0755 "$1/own-rootgrp"
  mkdir "$1/shared" && chown 0:$G "$1/shared" && chmod 0775 "$1/shared"
  mkdir "$1/rootdir" && chmod 0755 "$1/rootdir"
  printf 12345 > "$1/wo" && chown $U:$U "$1/wo" && chmod 0200 "$1/wo"
  printf 12345 > "$1/wo2" && chown $U:$U "$1/wo2" && chmod 0200 "$1/wo2"
  for f in rootfile rootfile-mv rootfile-rm rootdir/inner; do echo root > "$1/$f"; done
  mkdir "$1/rootempty"
  # another (non-root) user's objects, writable or removable by U: never
  # shown as U's (ownership checks such as git's safe.directory)
  mkdir "$1/otherdir" && echo o > "$1/otherdir/f" && echo o > "$1/otherfile"
  chown -R $O:$O "$1/otherdir" "$1/otherfile" && chmod 0777 "$1/otherdir" && chmod 0666 "$1/otherdir/f"
}
# What the host has afterwards, without names of the run.
host_state () {
  (cd "$1" && find . -mindepth 1 -printf '%p %U:%G %m %s\n' | sort; echo "wo: $(cat wo)"; echo "wo2: $(cat wo2)")
}

# U with the supplementary group G, on a /dev/fuse it may open: where the
# host keeps it root-only, a world-usable node in a private mount namespace.
unpriv () {
  local fuse_wrap=""
  if [ ! -w /dev/fuse ] || [ "$(stat -c %a /dev/fuse)" != 666 ]; then
    fuse_wrap="mkdir -p $TESTDIR/devfuse && mount -t tmpfs fsgate-test $TESTDIR/devfuse &&
      mknod -m 666 $TESTDIR/devfuse/fuse c 10 229 && mount --bind $TESTDIR/devfuse/fuse /dev/fuse &&"
  fi
  unshare -m --propagation private sh -c \
    "$fuse_wrap exec setpriv --reuid=$U --regid=$U --groups=$G \"\$@\"" sh "$@"
}

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
  skip "unprivileged runs decide permissions like the host" "root and setpriv"
elif ! setpriv --reuid=$U --regid=$U --clear-groups test -x "$FSGATE_RUN"; then
  skip "unprivileged runs decide permissions like the host" "a build directory usable by uid $U"
else
  fixture "$TESTDIR/native"
  fixture "$TESTDIR/view"
  native=$(cd "$TESTDIR/native" && setpriv --reuid=$U --regid=$U --groups=$G sh "$TESTDIR/probe.sh" . 2>&1)
  view=$(cd "$TESTDIR/view" && unpriv env HOME="$TESTDIR/view" \
    timeout -k 5 60 "$FSGATE_RUN" -- sh "$TESTDIR/probe.sh" . 2>&1)
  # positive controls: the host lets U do these
  check "natively, U creates in its own dir with group root" grep -qx "create in own dir with group root: ok" <<<"$native"
  check "natively, U writes its 0200 file" grep -qx "overwrite 2 bytes of the 0200 file: ok" <<<"$native"
  check "natively, U is refused in root's 0755 dir" grep -qx "create in root's 0755 dir: fail" <<<"$native"
  mapfile -t nl <<<"$native"
  mapfile -t vl <<<"$view"
  is "unprivileged: as many answers through fsgate-run as natively" "${#vl[@]}" "${#nl[@]}"
  for i in "${!nl[@]}"; do
    is "unprivileged: ${nl[$i]%%: *}" "${vl[$i]:-}" "${nl[$i]}"
  done
  is "unprivileged: the host has the same files afterwards" \
    "$(host_state "$TESTDIR/view")" "$(host_state "$TESTDIR/native")"
  # The owner and group the host records stay; inside, a directory the user
  # may write shows the user's own group in place of the unmapped root group.
  is "... the directory keeps its group on the host" "$(stat -c %u:%g "$TESTDIR/view/own-rootgrp")" "$U:0"
  out=$(cd "$TESTDIR/view" && unpriv env HOME="$TESTDIR/view" \
    timeout -k 5 60 "$FSGATE_RUN" -- stat -c %u:%g own-rootgrp rootdir/inner 2>&1)
  is "... shown inside with the user's group (writable) and the overflow ids (neither writable nor removable)" \
    "$out" "$U:$U
65534:65534"
  # git's safe.directory: another user's repository (shared: everyone may
  # write it) in the user's writable directory is refused natively, and
  # must be through the view too.
  if command -v git >/dev/null; then
    for d in native view; do
      git init -q "$TESTDIR/$d/otherrepo" && chown -R $O:$O "$TESTDIR/$d/otherrepo" &&
        chmod -R a+rwX "$TESTDIR/$d/otherrepo"
    done
    out=$(cd "$TESTDIR/native" && setpriv --reuid=$U --regid=$U --groups=$G \
      env HOME="$TESTDIR/native" git -C otherrepo rev-parse --git-dir 2>&1)
    check "control: natively git refuses another user's repository (dubious ownership)" \
      grep -q "dubious ownership" <<<"$out"
    out=$(cd "$TESTDIR/view" && unpriv env HOME="$TESTDIR/view" \
      timeout -k 5 60 "$FSGATE_RUN" -- git -C otherrepo rev-parse --git-dir 2>&1)
    check "unprivileged: git refuses it through fsgate-run too" grep -q "dubious ownership" <<<"$out"
  else
    skip "git's ownership check through fsgate-run" "git"
  fi
  out=$(cd "$TESTDIR/view" && unpriv env HOME="$TESTDIR/view" \
    timeout -k 5 60 "$FSGATE_RUN" --json "$TESTDIR/view/report.json" -- touch rootdir/g 2>&1)
  is "unprivileged: a refusal by the host is not a sandbox denial" \
    "$(json_get "$TESTDIR/view/report.json" "[d for d in r['denials'] if 'rootdir' in (d.get('path') or '')]")" "[]"
fi

# --- access(2) in read-only places, as root -----------------------------------
cat > "$TESTDIR/access.py" <<'EOF'
import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
for p in sys.argv[1:]:
    r = libc.access(p.encode(), 2)
    print('%s: %s' % (p, 'ok' if r == 0 else errno.errorcode[ctypes.get_errno()]))
EOF
if [ "$(id -u)" = 0 ]; then
  mkdir "$TESTDIR/robind"
  out=$(unshare -m --propagation private sh -c \
    "mount --bind -o ro /usr/bin $TESTDIR/robind && python3 $TESTDIR/access.py $TESTDIR/robind" 2>&1)
  is "control: access(W_OK) on a read-only bind mount says EROFS" "$out" "$TESTDIR/robind: EROFS"
  is "control: natively root may write /usr/bin" "$(python3 "$TESTDIR/access.py" /usr/bin)" "/usr/bin: ok"
  echo secret > "$WORK/denied.txt"
  out=$(run_fsg --deny-read "$WORK/denied.txt" -- python3 "$TESTDIR/access.py" /usr/bin /etc/passwd "$WORK" "$WORK/denied.txt" 2>&1)
  is "root: access(W_OK) is EROFS in read-only places, ok in the workspace, EACCES when denied" "$out" \
"/usr/bin: EROFS
/etc/passwd: EROFS
$WORK: ok
$WORK/denied.txt: EACCES"
  out=$(run_fsg -- sh -c 'test -w /usr/bin && echo writable || echo read-only')
  is "root: test -w /usr/bin says read-only" "$out" "read-only"
  # root inside has no capabilities: the host's permissions for uid 0 apply
  printf x > "$WORK/theirs" && chown $U:$U "$WORK/theirs" && chmod 0644 "$WORK/theirs"
  out=$(run_fsg -- sh -c 'echo y > theirs' 2>&1); rc=$?
  check "root: a file of another user's with mode 0644 stays unwritable" test "$rc" -ne 0
  is "... unchanged on the host" "$(cat "$WORK/theirs")" "x"
fi

# --- an exec-only binary stays unreadable, as root ----------------------------
# Without default_permissions the kernel does not check read permission at
# execve, so a mode 0711 binary of another owner would run dumpable and
# /proc/self/mem would give it away (reads b'\x7fELF'). fsgate-run refuses
# to run it (EACCES), as an unprivileged run does.
cat > "$TESTDIR/dump.py" <<'EOF2'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print('dumpable', libc.prctl(3, 0, 0, 0, 0))
exe = os.path.realpath('/proc/self/exe')
start = None
for line in open('/proc/self/maps'):
    f = line.split()
    if len(f) >= 6 and f[5] == exe:
        start = int(f[0].split('-')[0], 16)
        break
try:
    with open('/proc/self/mem', 'rb') as m:
        m.seek(start)
        print('mem', m.read(4))
except OSError as e:
    print('mem', type(e).__name__)
EOF2
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  mkdir "$TESTDIR/xonly" && chmod 0755 "$TESTDIR/xonly"
  # an ELF interpreter, not a wrapper script (pyenv shims)
  py=/usr/bin/python3
  [ -x "$py" ] || py=$(python3 -c 'import sys; print(sys.executable)')
  cp "$(readlink -f "$py")" "$TESTDIR/xonly/py"
  chown $U:$U "$TESTDIR/xonly/py" && chmod 0711 "$TESTDIR/xonly/py"
  chmod 0644 "$TESTDIR/dump.py"
  # positive control: natively another user may run it but not read it
  # (whether the host's kernel then keeps it non-dumpable depends on the
  # kernel: fs.suid_dumpable and its exec path)
  out=$(setpriv --reuid=23458 --regid=23458 --clear-groups "$TESTDIR/xonly/py" -c 'print("ran")' 2>&1)
  is "control: natively another user runs the 0711 binary" "$out" "ran"
  check "control: ... but cannot read it" \
    sh -c '! setpriv --reuid=23458 --regid=23458 --clear-groups cat "$1" >/dev/null 2>&1' sh "$TESTDIR/xonly/py"
  out=$(run_fsg --ro "$TESTDIR/xonly" --ro "$TESTDIR" -- sh -c \
    "\"$TESTDIR/xonly/py\" \"$TESTDIR/dump.py\" 2>/dev/null; echo rc=\$?" 2>&1)
  check "root: the 0711 binary of another user does not give itself away" \
    sh -c '! printf %s "$1" | grep -q ELF' sh "$out"
  is "root: ... it is refused (EACCES, 126 from sh)" "$out" "rc=126"
fi

# --- a capless root: fsgate-run as root against setpriv natively -------------
# The command runs as uid 0 without capabilities; natively the same is a
# root with no capabilities at all (securebits noroot). The same probe on
# two copies of one fixture of another user's files must give the same
# answers. (A 0711 binary is left out: refused in the view, on purpose.)
cat > "$TESTDIR/rootprobe.py" <<'EOF2'
import errno, os, sys
os.chdir(sys.argv[1])
def r(name, fn):
    try:
        res = fn()
        res = 'ok' if res is None else str(res)
    except OSError as e:
        res = errno.errorcode.get(e.errno, str(e.errno))
    print('%s: %s' % (name, res))
def write(p, flags=os.O_WRONLY | os.O_APPEND):
    def fn():
        fd = os.open(p, flags | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, b'x')
        finally:
            os.close(fd)
    return fn
def acc(p):
    return lambda: ''.join(c if os.access(p, m) else '-' for c, m in (('r', os.R_OK), ('w', os.W_OK), ('x', os.X_OK)))
for f in ('f644', 'f600', 'f602', 'd755', 'd777', 'd711', 'd700', 'sticky'):
    r('access ' + f, acc(f))
r('read f644', lambda: len(open('f644').read()))
r('read f600', lambda: len(open('f600').read()))
r('write f644', write('f644'))
r('write f602 (write-only)', write('f602'))
r('read f602', lambda: len(open('f602').read()))
r('create in d755', write('d755/new', os.O_WRONLY | os.O_CREAT))
r('unlink in d755', lambda: os.unlink('d755/x'))
r('create in d777', write('d777/new', os.O_WRONLY | os.O_CREAT))
r('owner of the new file', lambda: '%d:%d' % (os.stat('d777/new').st_uid, os.stat('d777/new').st_gid))
r('mkdir in d777', lambda: os.mkdir('d777/sub'))
r('list d711', lambda: ','.join(sorted(os.listdir('d711'))))
r('stat d711/x', lambda: os.stat('d711/x').st_size)
r('read d700/x', lambda: len(open('d700/x').read()))
r('unlink alice file in sticky', lambda: os.unlink('sticky/a'))
r('rename alice file in sticky', lambda: os.rename('sticky/a', 'sticky/b'))
r('chmod alice f644', lambda: os.chmod('f644', 0o600))
r('chown f666 to root', lambda: os.chown('f666', 0, 0))
r('utime alice f666 to now', lambda: os.utime('f666'))
r('utime alice f666 to 0', lambda: os.utime('f666', (0, 0)))
r('truncate alice f666', lambda: os.truncate('f666', 1))
r('setuid f666 kept after write', lambda: (os.write(os.open('s666', os.O_WRONLY), b'y'), oct(os.stat('s666').st_mode & 0o7777))[1])
EOF2
chmod 0644 "$TESTDIR/rootprobe.py"
rootfix () {
  mkdir -p "$1" && chmod 0755 "$1"
  (cd "$1" &&
   for f in f644 f600 f602 f666 s666; do echo data > $f; done &&
   chmod 0644 f644 && chmod 0600 f600 && chmod 0602 f602 && chmod 0666 f666 &&
   mkdir d755 d777 d711 d700 sticky && echo x > d755/x && echo x > d711/x && echo x > d700/x &&
   echo a > sticky/a && chmod 0755 d755 && chmod 0777 d777 && chmod 0711 d711 &&
   chmod 0700 d700 && chmod 1777 sticky &&
   chown -R $U:$U . && chmod 04666 s666 && chown 0:0 . && chmod 0777 .)
}
if [ "$(id -u)" = 0 ] && setpriv --securebits +noroot,+noroot_locked --bounding-set -all \
     --inh-caps -all true 2>/dev/null; then
  rootfix "$TESTDIR/rootcmp-native"
  rootfix "$TESTDIR/rootcmp-view"
  native=$(setpriv --securebits +noroot,+noroot_locked --bounding-set -all --inh-caps -all \
    python3 "$TESTDIR/rootprobe.py" "$TESTDIR/rootcmp-native" 2>&1)
  view=$(run_fsg --rw "$TESTDIR/rootcmp-view" -- python3 "$TESTDIR/rootprobe.py" "$TESTDIR/rootcmp-view" 2>&1)
  # positive controls: natively the capless root is refused what root may do
  check "control: natively a capless root cannot read another user's 0600 file" \
    grep -qx "read f600: EACCES" <<<"$native"
  check "control: natively a capless root writes a 0666 file" \
    grep -qx "truncate alice f666: ok" <<<"$native"
  mapfile -t nl <<<"$native"
  mapfile -t vl <<<"$view"
  is "capless root: as many answers through fsgate-run as natively" "${#vl[@]}" "${#nl[@]}"
  for i in "${!nl[@]}"; do
    is "capless root: ${nl[$i]%%: *}" "${vl[$i]:-}" "${nl[$i]}"
  done
else
  skip "a root run decides permissions like a capless root" "root and setpriv --securebits"
fi

# --- what the command wrote is on the host when fsgate-run returns ------------
# write(2) (the writeback cache of an unprivileged run keeps it in the
# kernel), a MAP_SHARED mapping never synced nor unmapped whose fd was
# closed, and a background child still writing when the command exits
# (killed with the sandbox). fsgate-run returns once every process of the
# sandbox is gone and the view is synced, without waiting for the
# namespaces to be torn down: nothing may be lost on the way, as root
# (kernel passthrough) and as U (writeback cache).
cat > "$TESTDIR/writer.py" <<'EOF'
import mmap, os, sys, time
d = sys.argv[1]
with open(os.path.join(d, "w.bin"), "wb") as f:
    f.write(bytes(range(256)) * 16384)
fd = os.open(os.path.join(d, "m.bin"), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
os.ftruncate(fd, 1 << 20)
m = mmap.mmap(fd, 1 << 20, mmap.MAP_SHARED)
os.close(fd)  # only the mapping holds the file: no flush at exit
for i in range(0, 1 << 20, 4096):
    m[i:i + 4096] = bytes([(i >> 12) & 0xff]) * 4096
r, w = os.pipe()
if os.fork() == 0:
    with open(os.path.join(d, "bg.txt"), "w") as f:
        f.write("written in the background\n")
    os.write(w, b"x")
    while True:
        with open(os.path.join(d, "bg.txt"), "a") as f:
            pass
os.read(r, 1)
os._exit(0)  # no msync, no munmap
EOF
mkdir -m 0777 "$TESTDIR/wn" "$TESTDIR/wr" "$TESTDIR/wu"
(timeout 10 python3 "$TESTDIR/writer.py" "$TESTDIR/wn"; pkill -f "writer.py $TESTDIR/wn" || true)
sums () { (cd "$1" && cat w.bin m.bin bg.txt 2>/dev/null | sha256sum | cut -c1-16); }
want=$(sums "$TESTDIR/wn")
check "control: natively the writer leaves 5 MiB in three files" test "$(cat "$TESTDIR"/wn/*.bin "$TESTDIR/wn/bg.txt" | wc -c)" -eq $((4194304 + 1048576 + 26))
if [ "$(id -u)" = 0 ]; then
  run_fsg --rw "$TESTDIR/wr" -- python3 "$TESTDIR/writer.py" "$TESTDIR/wr"
  is "root: everything written, mapped or written in the background is on the host at once" \
    "$(sums "$TESTDIR/wr")" "$want"
fi
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
   setpriv --reuid=$U --regid=$U --clear-groups test -x "$FSGATE_RUN"; then
  chown $U:$U "$TESTDIR/wu"
  (cd "$TESTDIR/wu" && unpriv env HOME="$TESTDIR/wu" timeout -k 5 60 "$FSGATE_RUN" --quiet -- \
    python3 "$TESTDIR/writer.py" "$TESTDIR/wu")
  is "unprivileged (writeback cache): the same, on the host at once" "$(sums "$TESTDIR/wu")" "$want"
else
  skip "unprivileged: written data on the host at once" "root and setpriv"
fi

done_testing
