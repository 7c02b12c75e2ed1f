#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Filesystem attacks through the real fsgate-run (security suite): each
# attack runs as the sandboxed command and must fail with the exact errno,
# the secret's bytes must never appear in any output, and the host files
# must stay unchanged. Rows of the threat table in docs/security.md
# are named in brackets.
. "$(dirname "$0")/../run/libtest.sh"
require_fsgate

SECRET="TOPSECRET-$MARK"
ALL_OUT="$TESTDIR/all-output"
: > "$ALL_OUT"
# fsg ARGS...: run, keep stdout+stderr for the final leak check, print them.
fsg () { run_fsg "$@" 2>&1 | tee -a "$ALL_OUT"; return "${PIPESTATUS[0]}"; }
# pyin [RUN ARGS...] -- CODE: python3 inside, with e(fn) giving "OK" or the errno name.
PYPRE='import os, sys, errno
def e(f, *a):
    try:
        r = f(*a)
        if isinstance(r, int) and f is os.open: os.close(r)
        return "OK"
    except OSError as x: return errno.errorcode.get(x.errno, str(x.errno))
def rd(p):
    try: return open(p, "rb").read().decode(errors="replace").strip()
    except OSError as x: return errno.errorcode.get(x.errno, str(x.errno))
'
pyin () {
  local args=()
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  fsg "${args[@]}" -- python3 -c "$PYPRE$1"
}
hostsum () { (cd "$1" && find . -printf '%p %m %u %s %l\n' | sort && find . -type f -exec cat {} + 2>/dev/null) | md5sum; }

echo "$SECRET" > "$WORK/.env"
mkdir -p "$TESTDIR/privdir"
echo "$SECRET" > "$TESTDIR/privdir/key"
echo "$SECRET" > "$TESTDIR/secret.txt"
DENY=(--deny-read "$TESTDIR/secret.txt" --deny-read "$TESTDIR/privdir")

# --- [1] direct reads of a denied file -----------------------------------------
out=$(pyin "${DENY[@]}" -- '
import mmap
print(e(os.open, ".env", os.O_RDONLY), e(os.stat, ".env"), e(os.getxattr, ".env", "user.x"),
      e(lambda: mmap.mmap(os.open(".env", os.O_RDONLY), 0, prot=mmap.PROT_READ)),
      e(os.listdir, sys.argv[0] if False else "'"$TESTDIR"'/privdir"),
      ".env" in os.listdir("."))')
is "[1] open/stat/getxattr/mmap of a deny-read file and listing a denied dir: EACCES" "$out" \
  "EACCES EACCES EACCES EACCES EACCES True"
run_fsg --json "$TESTDIR/r1b.json" -- cat .env >/dev/null 2>&1
is "[1] one cat of a denied file is one audit record" \
  "$(json_get "$TESTDIR/r1b.json" '[(d["operation"], d["path"], d["errno"]) for d in r["denials"]]')" \
  "[('lookup', '$WORK/.env', 13)]"

# --- [2] symlinks to a denied file -------------------------------------------------
ln -s "$TESTDIR/secret.txt" "$WORK/planted"
out=$(pyin "${DENY[@]}" -- '
os.symlink(os.path.abspath(".env"), "abs"); os.symlink(".env", "rel")
os.symlink("rel", "chain1"); os.symlink("chain1", "chain2")
os.symlink("../work/./rel", "dotdot")
os.symlink("loop2", "loop1"); os.symlink("loop1", "loop2")
os.symlink("'"$TESTDIR"'/privdir", "dirlink")
print(rd("abs"), rd("rel"), rd("chain2"), rd("dotdot"), rd("loop1"), rd("planted"), rd("dirlink/key"))')
is "[2] symlink to a denied file (absolute, relative, chained, via .., loop, planted by the host, into a denied dir)" \
  "$out" "EACCES EACCES EACCES EACCES ELOOP EACCES EACCES"

# --- [3] symlinks out of every root ------------------------------------------------------
out=$(pyin --profile none --rw "$WORK" --ro /usr --ro /lib --ro /lib64 -- '
os.symlink("/etc/passwd", "out1"); os.symlink("../../../../../../../etc/hostname", "out2")
print(rd("out1"), rd("out2"), e(os.stat, "/etc"))')
is "[3] symlinks out of every root resolve inside the view only (ENOENT)" "$out" "ENOENT ENOENT ENOENT"
is "[3] an absolute symlink in a read-only root to a denied file stays denied" \
  "$(cd "$TESTDIR" && ln -s /etc/shadow shadowlink && cd "$WORK" && pyin -- 'print(rd("'"$TESTDIR"'/shadowlink"))')" "EACCES"

# --- [4] hard links ------------------------------------------------------------------------
out=$(pyin "${DENY[@]}" -- '
print(e(os.link, ".env", "hl1"), e(os.link, "'"$TESTDIR"'/secret.txt", "hl2"), e(os.stat, "hl1"))')
is "[4] link() of a denied file into the writable root: EACCES (nothing created)" "$out" "EACCES EACCES ENOENT"
ln "$TESTDIR/secret.txt" "$WORK/prelink"
is "[4] a pre-existing hard link of a literal deny-read file is denied by identity" \
  "$(pyin "${DENY[@]}" -- 'print(rd("prelink"), e(os.stat, "prelink"))')" "EACCES EACCES"
rm -f "$WORK/prelink"
echo "GLOBLINK-$MARK" > "$WORK/cert.pem"
ln "$WORK/cert.pem" "$WORK/cert-copy.txt"
is "[4] LIMITATION (documented): a pre-existing hard link of a file denied only by a glob is readable" \
  "$(run_fsg -- cat cert-copy.txt 2>&1)" "GLOBLINK-$MARK"
rm -f "$WORK/cert.pem" "$WORK/cert-copy.txt"

# --- [5] rename / link / unlink / rmdir / replace of protected paths and ancestors ----------------
mkdir -p "$WORK/proj/sub" "$WORK/g/x" "$WORK/movable"
echo "$SECRET" > "$WORK/proj/.secretconf"
echo "$SECRET" > "$WORK/g/x/token"
echo "$SECRET" > "$WORK/movable/.env"
echo public > "$WORK/y"
before=$(hostsum "$WORK")
out=$(pyin --deny-read "$WORK/proj/.secretconf" --deny-read "$WORK/g/*/token" -- '
print(e(os.rename, ".env", "env.txt"), e(os.rename, "y", ".env"), e(os.unlink, ".env"),
      e(os.link, ".env", "x2"), e(os.rename, "proj", "proj2"), e(os.rmdir, "proj"),
      e(os.unlink, "proj/.secretconf"), e(os.rename, "proj/.secretconf", "leak"),
      e(os.rename, "y", "proj/.secretconf"))
print(e(os.rename, "g/x", "moved"), rd("moved/token"), rd("g/x/token"))
print(e(os.rename, "movable", "moved2"), rd("moved2/.env"))')
is "[5] rename away/onto, unlink, link a denied file; rename/rmdir its ancestor; rename a dir out of an anchored glob" \
  "$out" "EACCES EACCES EACCES EACCES EPERM EPERM EACCES EACCES EACCES
EPERM ENOENT EACCES
OK EACCES"
mv "$WORK/moved2" "$WORK/movable" 2>/dev/null
is "[5] ... the host tree is unchanged" "$(hostsum "$WORK")" "$before"

# --- [6] a file matching a deny glob, created by the host during the run ------------------------
rm -f "$WORK/go"
fsg -- sh -c 'while [ ! -e go ]; do sleep 0.05; done; cat late.pem; echo rc=$?' > "$TESTDIR/late.out" &
late=$!; track $late
sleep 0.3
echo "$SECRET" > "$WORK/late.pem"; touch "$WORK/go"
wait $late
is "[6] x.pem created by the host while the command runs: EACCES at first lookup" \
  "$(grep -o 'Permission denied\|rc=.*' "$TESTDIR/late.out" | tr '\n' ' ')" "Permission denied rc=1 "
is "[6] a deny-glob name created by the command: EACCES, nothing on the host" \
  "$(pyin -- 'print(e(os.open, "new.pem", os.O_WRONLY | os.O_CREAT)); print(os.path.exists("new.pem"))' ; test -e "$WORK/new.pem" && echo host-has-it)" \
  "EACCES
False"

# --- [7] path forms ---------------------------------------------------------------------------------
mkdir -p "$WORK/sub"
out=$(pyin "${DENY[@]}" -- '
w = os.getcwd()
print(rd("sub/../.env"), rd(".//.env"), rd(w + "/./.env"), rd(w + "//.env"), rd("./sub/.././/./.env"),
      rd(".env/"), e(os.listdir, "'"$TESTDIR"'/privdir/"), rd("'"$TESTDIR"'//privdir//key"))')
is "[7] .., //, /./ and trailing slashes do not bypass a rule" "$out" "EACCES EACCES EACCES EACCES EACCES EACCES EACCES EACCES"
# > PATH_MAX through deep directories, made on the host with dir fds.
python3 - "$WORK" "$SECRET" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(40):
    os.mkdir("d" * 200, dir_fd=fd)
    n = os.open("d" * 200, os.O_RDONLY, dir_fd=fd); os.close(fd); fd = n
with open(os.open(".env", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f: f.write(sys.argv[2])
with open(os.open("ok.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f: f.write("deep-ok")
PY
out=$(pyin -- '
fd = os.open(".", os.O_RDONLY)
for i in range(40):
    n = os.open("d" * 200, os.O_RDONLY, dir_fd=fd); os.close(fd); fd = n
def rf(name):
    try: return os.read(os.open(name, os.O_RDONLY, dir_fd=fd), 100).decode()
    except OSError as x: return errno.errorcode[x.errno]
os.write(os.open("new.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), b"x")
print(rf(".env"), rf("ok.txt"), rf("new.txt"), e(os.stat, "/".join(["d" * 200] * 40) + "/ok.txt"))
print(open("y").read().strip())')
is "[7] a path longer than PATH_MAX (40 x 200-byte dirs): rule still applies, other files work, daemon alive" \
  "$out" "EACCES deep-ok x ENAMETOOLONG
public"
rm -rf "$WORK/$(printf 'd%.0s' $(seq 200))"
# Odd bytes in names: newline, 0xff, spaces, a leading dash.
out=$(pyin -- '
names = [b"new\nline", b"\xff\xfe", b"with space ", b"-dash", b"tab\there"]
for n in names:
    with open(n, "wb") as f: f.write(n)
print(all(open(n, "rb").read() == n for n in names), sorted(set(os.listdir(b".")) & set(names)) == sorted(names))')
is "[7] names with newline, 0xff, spaces, tabs, leading dash round-trip" "$out" "True True"
check "[7] ... the host sees the exact bytes" test -f "$WORK/$(printf 'new\nline')" -a -f "$WORK/$(printf '\377\376')"
# A denial on an odd-byte path, by a command whose name is not UTF-8, is in the report.
d=$(printf 'odd\n\377dir'); mkdir -p "$WORK/$d"; echo "$SECRET" > "$WORK/$d/.env"
run_fsg --json "$TESTDIR/r7b.json" -- python3 -c '
import ctypes; ctypes.CDLL(None).prctl(15, b"\xff\xfe\nevil", 0, 0, 0)
try: open(b"odd\n\xffdir/.env", "rb")
except OSError as x: print(x.errno)' >/dev/null 2>&1
is "[7] a denial on a non-UTF-8 path by a non-UTF-8 command name is still reported" \
  "$(json_get "$TESTDIR/r7b.json" '(r["sandbox_denied"], [(d["path"].split("/")[-1], d["errno"], len(d["command"]) > 0) for d in r["denials"] if d["path"].endswith(".env")])')" \
  "(True, [('.env', 13, True)])"

# --- [9] every mutating operation on a read-only root ----------------------------------------------
# (chown says EROFS like a read-only bind mount: the policy is checked before the host's permissions)
mkdir -p "$TESTDIR/ro/d" "$TESTDIR/ro/e"
echo orig > "$TESTDIR/ro/f"
before=$(hostsum "$TESTDIR/ro")
out=$(cd "$TESTDIR" && pyin --ro "$TESTDIR/ro" -- '
F = "ro/f"
print(e(os.open, F, os.O_WRONLY), e(os.open, F, os.O_RDWR | os.O_APPEND), e(os.open, F, os.O_WRONLY | os.O_TRUNC),
      e(os.truncate, F, 0), e(os.chmod, F, 0o600), e(os.chown, F, 1, 1), e(os.utime, F, (1, 1)),
      e(os.setxattr, F, "user.x", b"1"), e(os.removexattr, F, "user.x"), e(os.mknod, "ro/n"), e(os.mkfifo, "ro/p"), e(os.mkdir, "ro/m"),
      e(os.symlink, "f", "ro/s"), e(os.link, F, "ro/l"), e(os.rename, F, "ro/g"), e(os.rename, F, "ro/d/f"),
      e(os.unlink, F), e(os.rmdir, "ro/e"), e(os.open, "ro/new", os.O_WRONLY | os.O_CREAT))
fd = os.open(F, os.O_RDONLY)
print(e(os.posix_fallocate, fd, 0, 10), e(os.copy_file_range, fd, fd, 1), e(os.write, fd, b"x"), e(os.ftruncate, fd, 0))')
is "[9] write/truncate/chmod/chown/utimens/xattr/mknod/mkdir/symlink/link/rename/unlink/rmdir/create on a read-only root" \
  "$(head -1 <<<"$out")" "EROFS EROFS EROFS EROFS EROFS EROFS EROFS ENOTSUP ENOTSUP EROFS EROFS EROFS EROFS EROFS EROFS EROFS EROFS EROFS EROFS"
is "[9] fallocate/copy_file_range/write/ftruncate on the only fd one can get (read-only)" "$(tail -1 <<<"$out")" "EBADF EBADF EBADF EINVAL"
echo rw > "$WORK/rwfile"
out=$(cd "$TESTDIR" && pyin --ro "$TESTDIR/ro" --rw "$WORK" -- '
print(e(os.rename, "work/rwfile", "ro/rwfile"), e(os.link, "work/rwfile", "ro/rwfile"), e(os.rename, "ro/f", "work/f"))
fi = os.open("work/rwfile", os.O_RDONLY); print(e(os.copy_file_range, fi, os.open("ro/f", os.O_RDONLY), 2))')
is "[9] rename/link between a writable and a read-only root" "$out" "EROFS EROFS EROFS
EBADF"
is "[9] ... the read-only tree is unchanged on the host" "$(hostsum "$TESTDIR/ro")" "$before"
is "[9] the default profile: the host / is read-only" \
  "$(pyin -- 'print(e(os.open, "/usr/fsgate-x", os.O_WRONLY | os.O_CREAT), e(os.utime, "/etc/hostname"), e(os.chmod, "/usr/bin", 0o777))')" \
  "EROFS EROFS EROFS"

# --- [17] device nodes ---------------------------------------------------------------------------------
mknod "$WORK/hostnull" c 1 3
out=$(pyin -- '
print(e(os.mknod, "c", 0o666 | 0o020000, os.makedev(1, 3)), e(os.mknod, "b", 0o666 | 0o060000, os.makedev(7, 0)),
      e(os.open, "hostnull", os.O_RDONLY))
print(e(os.open, "/dev/sda", os.O_RDONLY), e(os.open, "/dev/kmsg", os.O_RDONLY), e(os.open, "/dev/mem", os.O_RDONLY),
      e(os.open, "/dev/fuse", os.O_RDWR), e(os.open, "/dev/vda", os.O_RDONLY))')
is "[17] mknod c/b: EPERM; a host device node in the writable root cannot be opened (nodev)" "$(head -1 <<<"$out")" "EPERM EPERM EACCES"
is "[17] /dev/sda, /dev/kmsg, /dev/mem, /dev/fuse do not exist" "$(tail -1 <<<"$out")" "ENOENT ENOENT ENOENT ENOENT ENOENT"
check "[17] ... and nothing was created on the host" test ! -e "$WORK/c" -a ! -e "$WORK/b"
rm -f "$WORK/hostnull"

# --- [18] setuid binaries, file capabilities ---------------------------------------------------------------
cp "$(command -v id)" "$WORK/suid-id"; chown 4242:4242 "$WORK/suid-id"; chmod 6755 "$WORK/suid-id"
is "[18] a setuid/setgid binary (owner 4242) in the writable root gives no elevation" \
  "$(fsg -- sh -c './suid-id -u; ./suid-id -g')" "$(id -u)
$(id -g)"
out=$(pyin -- '
import shutil
shutil.copy("/usr/bin/id", "myid"); os.chmod("myid", 0o6755)
fd = os.open("created", os.O_WRONLY | os.O_CREAT, 0o6755); os.fchmod(fd, 0o4755); os.close(fd)
os.mkdir("sgdir", 0o2755)
print(e(os.setxattr, "myid", "security.capability", b"\x01\x00\x00\x02" + b"\x00" * 16),
      e(os.setxattr, "myid", "trusted.x", b"1"), e(os.setxattr, "myid", "security.evil", b"1"),
      e(os.setxattr, "myid", "user.x", b"1"))')
is "[18] security.capability / trusted.* / security.* / user.* xattrs cannot be set" "$out" "EPERM EPERM EPERM ENOTSUP"
is "[18] chmod u+s/g+s made inside is stripped on the host (root caller, no caps)" \
  "$(stat -c '%A' "$WORK/myid" "$WORK/created")" "-rwxr-xr-x
-rwxr-xr-x"
is "[18] ... no xattr reached the host" "$(python3 -c 'import os,sys; print(os.listxattr(sys.argv[1]))' "$WORK/myid")" "[]"

# --- [19] persistence: .git/hooks, .git/config, the policy file -----------------------------------------------
# (git protection, docs/security.md "Git"; every planting technique is in
# tests/git/test-git-plant.sh with its positive control)
mkdir -p "$WORK/.git/hooks"
printf '[core]\n\tbare = false\n' > "$WORK/.git/config"
echo '#!/bin/sh' > "$WORK/.git/hooks/pre-commit"
echo plain > "$WORK/plain"
printf '[filesystem]\ndeny-read = %s\n' "$TESTDIR/secret.txt" > "$WORK/policy.ini"
before=$(md5sum < "$WORK/.git/config"; md5sum < "$WORK/policy.ini")
out=$(pyin -p ./policy.ini -- '
print(e(os.open, ".git/config", os.O_WRONLY | os.O_APPEND), e(os.chmod, ".git/hooks/pre-commit", 0o777),
      e(os.symlink, "/tmp/x", ".git/hooks/pre-push"), e(os.link, "plain", ".git/hooks/post-merge"),
      e(os.open, ".git/hooks/post-checkout", os.O_WRONLY | os.O_CREAT, 0o755),
      oct(os.stat(".git/hooks/post-checkout").st_mode & 0o777))
print(e(os.open, "policy.ini", os.O_WRONLY | os.O_TRUNC), e(os.unlink, "policy.ini"), e(os.rename, "y", "policy.ini"), rd("'"$TESTDIR"'/secret.txt"))')
is "[19] .git/config cannot be written, no hook can be made executable, symlinked or linked" "$(head -1 <<<"$out")" \
  "EPERM EPERM EPERM EPERM OK 0o644"
is "[19,44] the --policy file in the workspace cannot be rewritten, removed or replaced (and still applies)" "$(tail -1 <<<"$out")" \
  "EROFS EROFS EROFS EACCES"
is "[19,44] ... host files unchanged, no executable hook" \
  "$(md5sum < "$WORK/.git/config"; md5sum < "$WORK/policy.ini"; find "$WORK/.git/hooks" -type f -perm /111)" "$before"
# included policy files: by their real path and by the name they were given
# (a symlink), and an optional include that does not exist yet
mkdir -p "$WORK/conf"
printf '[filesystem]\ndeny-read = %s\n' "$TESTDIR/secret.txt" > "$WORK/conf/common.ini"
printf '[policy]\ninclude = conf/common.ini;?local.ini\n' > "$WORK/main.ini"
ln -sf main.ini "$WORK/policy-link.ini"
before=$(md5sum < "$WORK/conf/common.ini"; md5sum < "$WORK/main.ini")
out=$(pyin -p ./policy-link.ini -- '
print(e(os.open, "conf/common.ini", os.O_WRONLY | os.O_TRUNC), e(os.rename, "conf", "conf2"),
      e(os.open, "local.ini", os.O_WRONLY | os.O_CREAT), e(os.unlink, "policy-link.ini"),
      e(os.rename, "main.ini", "m2"), rd("'"$TESTDIR"'/secret.txt"))')
is "[19,44] included files, an absent optional include and a symlinked --policy name are protected too" \
  "$out" "EROFS EPERM EROFS EROFS EROFS EACCES"
is "[19,44] ... host files unchanged, nothing created" \
  "$(md5sum < "$WORK/conf/common.ini"; md5sum < "$WORK/main.ini"; test -e "$WORK/local.ini" && echo created)" "$before"
mv_out=$(pyin -- 'print(e(os.rename, ".git", "dotgit"), e(os.rename, "dotgit", ".git"))')
is "[19] renaming .git away and back: allowed, its hooks stay inert" \
  "$mv_out $(find "$WORK/.git/hooks" -type f -perm /111)" "OK OK "

# --- [20] create-then-chmod race: files appear on the host with their final mode --------------------
mkdir -m 0777 "$WORK/modes"
python3 - "$WORK/modes" > "$TESTDIR/modes.out" <<'PY' &
import os, sys, time
seen = {}; end = time.time() + 20
while time.time() < end and len(seen) < 300:
    for e in os.scandir(sys.argv[1]):
        if e.name not in seen:
            try: seen[e.name] = os.lstat(e.path).st_mode & 0o7777
            except FileNotFoundError: pass
print(len(seen), sorted(set(oct(m) for m in seen.values())))
PY
wp=$!; track $wp
pyin -- '
os.umask(0o022)
for i in range(150): os.close(os.open("modes/f%d" % i, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
for i in range(150): os.mkdir("modes/d%d" % i, 0o700)' >/dev/null
wait $wp
is "[20] 150 files (0600) and 150 dirs (0700) made inside are never seen by the host with a wider mode" \
  "$(cat "$TESTDIR/modes.out")" "300 ['0o600', '0o700']"

# --- [21] host mount flags: noexec and nosymfollow are kept in the view -----------------------------------------
# The view is one FUSE mount; fsgate-run gives each place below a root that
# sits on a noexec or nosymfollow host mount a bind with that flag, and
# clears it again on a mount below that does not have it.
if [ "$(id -u)" = 0 ]; then
  NX=$WORK/nx; NSF=$WORK/nsf
  _secfs_cleanup () {
    local m
    for m in "$NX/sub" "$NX" "$NSF"; do grep -q " $m " /proc/self/mountinfo && umount -l "$m"; done
    _cleanup
  }
  trap _secfs_cleanup EXIT
  mkdir -p "$NX" "$NSF"
  mount -t tmpfs -o noexec,mode=0777 fsgate-test-nx "$NX"
  mkdir "$NX/sub"
  mount -t tmpfs -o mode=0777 fsgate-test-ex "$NX/sub"
  mount -t tmpfs -o nosymfollow,mode=0777 fsgate-test-nsf "$NSF"
  cp /bin/true "$NX/true"; cp /bin/true "$NX/sub/true"
  echo hi > "$NSF/f"; ln -s f "$NSF/l"
  probe='"$1/true" 2>/dev/null; echo $?; "$1/sub/true"; echo $?; cat "$2/l" 2>/dev/null; echo $?'
  native=$(sh -c "$probe" sh "$NX" "$NSF" | tr '\n' ' ')
  out=$(fsg -- sh -c "$probe" sh "$NX" "$NSF" | tr '\n' ' ')
  is "[21] natively: noexec refuses, the exec submount runs, nosymfollow refuses" "$native" "126 0 1 "
  is "[21] the same through the view" "$out" "$native"
  out=$(fsg -- sh -c 'cp /bin/true nx/mine && chmod +x nx/mine && { nx/mine 2>/dev/null; echo $?; }')
  is "[21] a binary the command writes to a noexec place does not run" "$out" 126
else
  skip "[21] host mount flags in the view" "root (to mount the noexec and nosymfollow tmpfs)"
fi

# --- no leak anywhere -------------------------------------------------------------------------------------------
check "the secret never appeared in any output" bash -c '! grep -q "$1" "$2"' _ "$SECRET" "$ALL_OUT"
is "no FUSE mount left on the host" "$(fsg_mounts)" "0"
done_testing
