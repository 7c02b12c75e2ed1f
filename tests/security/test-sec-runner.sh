#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runner and policy hardening of issue 14 (security suite), attacks through
# the real fsgate-run: planted symlinks widening a later run's roots, in-place
# writes through hard links, hard links of files in denied directories, the
# --json report redirected or suppressed, denial floods, a second procfs
# under a root, the runner's own setup counted as denials. Item numbers of
# the issue are in brackets.
. "$(dirname "$0")/../run/libtest.sh"
require_fsgate

SECRET="TOPSECRET-$MARK"

# --- [4] the report is written where it was asked for, whatever the command does -------------
mkdir "$WORK/out" "$TESTDIR/victim"
run_fsg --json "$WORK/out/report.json" -- sh -c 'mv out out.orig && ln -s "$1" out' sh "$TESTDIR/victim" 2>/dev/null
rc=$?
check "[4] the command replaced out/ by a symlink to another directory: the report is not written there" \
  test ! -e "$TESTDIR/victim/report.json"
is "[4] ... it is in the directory opened before the command started, with the command's status" \
  "$rc/$(json_get "$WORK/out.orig/report.json" 'r["reason"], r["exit_code"]')" "0/('exited', 0)"
rm -rf "$WORK/out" "$WORK/out.orig"

mkdir "$WORK/out"
echo "host file" > "$TESTDIR/victim/file"
run_fsg --json "$WORK/out/report.json" -- ln -s "$TESTDIR/victim/file" out/report.json 2>/dev/null
is "[4] report.json replaced by a symlink to a host file: the host file is unchanged" \
  "$(cat "$TESTDIR/victim/file")/$([ -L "$WORK/out/report.json" ] && echo link || echo file)" "host file/file"

err=$(run_fsg --json "$WORK/out/r2.json" -- sh -c 'mkdir out/r2.json; exit 0' 2>&1 >/dev/null); rc=$?
is "[4] mkdir of the report's name by the command: the exit status is still the command's (0)" "$rc" "0"
check "[4] ... and stderr says the report could not be written" \
  grep -q "the report could not be written to '$WORK/out/r2.json'" <<<"$err"
err=$(run_fsg --json "$WORK/out/r3.json" -- sh -c 'rmdir out/r2.json; mkdir out/r3.json; exit 3' 2>&1 >/dev/null); rc=$?
is "[4] ... and a failing command keeps its own status (3), not 125" "$rc" "3"
ls -A "$WORK/out" > "$TESTDIR/left"
is "[4] no temporary report file is left behind" "$(cat "$TESTDIR/left")" "r3.json
report.json"

# a full disk: the report cannot be written, the status stays the command's
small="$TESTDIR/small"; mkdir "$small"
if mount -t tmpfs -o size=64k fsgate-test-small "$small" 2>/dev/null; then
  err=$(run_fsg --rw "$small" --json "$small/r.json" -- \
        sh -c 'cat /dev/zero > "$1/fill" 2>/dev/null; exit 0' sh "$small" 2>&1 >/dev/null); rc=$?
  umount "$small" 2>/dev/null || umount -l "$small"
  is "[4] the command filled the report's file system: exit status 0, the command's" "$rc" "0"
  check "[4] ... and stderr says why there is no report" grep -q "could not be written.*No space left" <<<"$err"
else
  skip "[4] the command filled the report's file system" "mount(tmpfs)"
  skip "[4] ... and stderr says why there is no report" "mount(tmpfs)"
fi

# --- [5] a denial flood does not hide the denial that matters --------------------------------
mkdir "$WORK/flood"
python3 -c '
import sys
for i in range(10100): open("%s/n%05d.secret" % (sys.argv[1], i), "w").write("x")
open(sys.argv[1] + "/key.secret", "w").write(sys.argv[2])' "$WORK/flood" "$SECRET"
run_fsg --deny-read '**/*.secret' --json "$TESTDIR/flood1.json" -- python3 -c '
def tryopen(p):
    try: open(p).read()
    except OSError: pass
for i in range(1500): tryopen("flood/n%05d.secret" % i)
for i in range(5000): tryopen("flood/n00000.secret")
tryopen("flood/key.secret")' 2>"$TESTDIR/flood1.err"
is "[5] 1500 distinct denials, 5000 more of one of them, then the one that matters: it is listed, once" \
  "$(json_get "$TESTDIR/flood1.json" '[(d["count"], d["first_ms"] >= 0) for d in r["denials"] if d["path"].endswith("/key.secret")]')" \
  "[(1, True)]"
is "[5] ... the repeated one is one record with its count; every denial is in the total" \
  "$(json_get "$TESTDIR/flood1.json" '([d["count"] for d in r["denials"] if d["path"].endswith("/n00000.secret")], len([d for d in r["denials"] if "/flood/" in d["path"]]), sum(d["count"] for d in r["denials"] if "/flood/" in d["path"]), r["denials_total"] == sum(d["count"] for d in r["denials"]), r["denials_unlisted"])')" \
  "([5001], 1501, 6501, True, 0)"
run_fsg --deny-read '**/*.secret' --json "$TESTDIR/flood2.json" -- python3 -c '
for i in range(10100):
    try: open("flood/n%05d.secret" % i).read()
    except OSError: pass' 2>"$TESTDIR/flood2.err"
is "[5] 10100 distinct denials: 10000 listed, the rest (>= 100) counted as unlisted, all in the total" \
  "$(json_get "$TESTDIR/flood2.json" '(len([d for d in r["denials"] if not d.get("past_bound")]), r["denials_total"] == sum(d["count"] for d in r["denials"]), r["denials_unlisted"] == sum(d["count"] for d in r["denials"] if d.get("past_bound")), r["denials_unlisted"] >= 100)')" "(10000, True, True, True)"
check "[5] ... and stderr says the bound was hit" grep -q "more than 10000 distinct denials" "$TESTDIR/flood2.err"
# review M8: past the bound, a denial of another rule (the ~/.ssh that
# matters) is still listed: one record per (operation, rule) with a count
mkdir "$TESTDIR/ssh5"; echo "$SECRET" > "$TESTDIR/ssh5/id_ed25519"
run_fsg --deny-read '**/*.secret' --deny-read "$TESTDIR/ssh5" --ro "$TESTDIR/ssh5" \
  --json "$TESTDIR/flood3.json" -- python3 -c '
import sys
for i in range(10100):
    try: open("flood/n%05d.secret" % i).read()
    except OSError: pass
for i in range(3):
    try: open(sys.argv[1]).read()
    except OSError: pass' "$TESTDIR/ssh5/id_ed25519" 2>/dev/null
is "[5] 10100 junk denials, then 3 of another rule: that rule is listed past the bound, with its count" \
  "$(json_get "$TESTDIR/flood3.json" '[(d["count"], d.get("past_bound")) for d in r["denials"] if "ssh5" in d.get("rule", "")]')" \
  "[(3, True)]"

# --- [8] the runner's own setup is not the command's denial -----------------------------------
# A noexec bind mount under the working directory of a denied directory: I
# binds the place with noexec (host-mounts.c) and meets the denial (by
# identity) while setting up; `-- true` denied nothing.
mkdir "$TESTDIR/s8" "$WORK/nx8"; echo "$SECRET" > "$TESTDIR/s8/key"
if mount --bind "$TESTDIR/s8" "$WORK/nx8" 2>/dev/null && mount -o remount,bind,noexec "$WORK/nx8" 2>/dev/null; then
  run_fsg --deny-read "$TESTDIR/s8" --json "$TESTDIR/r8.json" -- true 2>/dev/null
  run_fsg --deny-read "$TESTDIR/s8" --json "$TESTDIR/r8b.json" -- cat nx8/key >/dev/null 2>&1
  # I's records read only after S said I is gone (every control message
  # read 0.1 s late): still setup's, told apart by I's pid.
  if command -v strace >/dev/null; then
    strace -f -qq -o /dev/null -e trace=recvmsg -e inject=recvmsg:delay_exit=100000 \
      "$FSGATE_RUN" --quiet --deny-read "$TESTDIR/s8" --json "$TESTDIR/r8c.json" -- true 2>/dev/null
  fi
  umount "$WORK/nx8" 2>/dev/null || umount -l "$WORK/nx8" # the test's own host mount
  is "[8] -- true with a noexec mount of a denied directory under the cwd: sandbox_denied false, no denial" \
    "$(json_get "$TESTDIR/r8.json" '(r["sandbox_denied"], r["denials"], [d["command"] for d in r["setup_denials"]][:1])')" \
    "(False, [], ['fsgate-init'])"
  if command -v strace >/dev/null; then
    is "[8] ... also when R reads the control socket late (I gone before its records are read)" \
      "$(json_get "$TESTDIR/r8c.json" '(r["sandbox_denied"], r["denials"], [d["command"] for d in r["setup_denials"]][:1])')" \
      "(False, [], ['fsgate-init'])"
  else
    skip "[8] ... also when R reads the control socket late" "strace"
  fi
  is "[8] ... the command's own access to it is still a denial, with the command's name" \
    "$(json_get "$TESTDIR/r8b.json" '(r["sandbox_denied"], sorted(set(d["command"] for d in r["denials"])))')" \
    "(True, ['cat'])"
else
  umount "$WORK/nx8" 2>/dev/null
  skip "[8] -- true with a noexec mount of a denied directory under the cwd" "mount --bind (root)"
  skip "[8] ... the command's own access to it is still a denial" "mount --bind (root)"
fi

# review M7 (b): a symlink planted by an earlier run as the report's directory
mkdir "$TESTDIR/victim7"
ln -s "$TESTDIR/victim7" "$WORK/o7"
echo ctl > "$WORK/o7/ctl"
is "[4] control: without the sandbox, a file written through o7/ lands in the symlink's target" \
  "$(cat "$TESTDIR/victim7/ctl")" "ctl"
rm "$TESTDIR/victim7/ctl"
err=$(run_fsg --json "$WORK/o7/r.json" -- true 2>&1); rc=$?
is "[4] --json o7/r.json with o7 a planted symlink: refused (2), nothing written in its target" \
  "$rc/$(ls "$TESTDIR/victim7")" "2/"
check "[4] ... the error names the symlink and its target" \
  grep -qF "the symlink '$WORK/o7' -> '$TESTDIR/victim7', which is not a system symlink" <<<"$err"
# review M7 (a): the command moves the report's directory away and forges one
mkdir "$WORK/out7"
err=$(run_fsg --json "$WORK/out7/report.json" -- sh -c 'mv out7 out7.old && mkdir out7 && echo "{\"exit_code\": 0}" > out7/report.json; exit 3' 2>&1); rc=$?
is "[4] mv out out.old; mkdir out; forged out/report.json: the real report is in out.old (status 3)" \
  "$rc/$(json_get "$WORK/out7.old/report.json" 'r["exit_code"]')" "3/3"
check "[4] ... and stderr says where the report really is" \
  grep -qF "the report is '$WORK/out7.old/report.json'" <<<"$err"

# --- [1] a symlink planted by one run does not widen the next run's root ----------------------
FSGATE=${FSGATE:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/fsgate/fsgate}
mkdir "$TESTDIR/host1" "$WORK/p1" "$WORK/p1/build"
cd "$WORK/p1"
run_fsg -- sh -c 'rm -r build && ln -s "$1" build' sh "$TESTDIR/host1" 2>/dev/null
check "[1] control: run 1 (default profile) replaced build/ by a symlink to a host directory" test -L build
err=$(run_fsg --profile read-only --rw ./build -- touch build/planted 2>&1); rc=$?
is "[1] run 2 --profile read-only --rw ./build: refused (2), nothing written to the symlink's target" \
  "$rc/$(ls "$TESTDIR/host1")" "2/"
check "[1] ... the error names the symlink and its target" \
  grep -qF "goes through the symlink '$WORK/p1/build' -> '$TESTDIR/host1', which is not a system symlink" <<<"$err"
printf '[filesystem]\nwritable = ?${CWD}/build\n' > "$TESTDIR/p1.ini"
err=$(run_fsg --profile read-only --policy "$TESTDIR/p1.ini" -- touch build/planted 2>&1); rc=$?
is "[1] ... an optional ?\${CWD}/build root in a policy file: refused too, naming FILE:LINE" \
  "$rc/$(grep -c "p1.ini:2: writable root '$WORK/p1/build' goes through the symlink" <<<"$err")" "2/1"
"$FSGATE" explain --profile read-only --rw ./build ./build >/dev/null 2>&1; rc=$?
is "[1] ... fsgate explain agrees (policy error, 2)" "$rc" "2"
out=$(run_fsg --profile none -C /usr --ro /bin --ro /lib --ro /lib64 --ro /usr -- /bin/sh -c 'echo system-ok' 2>&1)
is "[1] system symlinks (/bin -> usr/bin, /lib64) still work as roots" "$out" "system-ok"
# review repro B: run 1 plants data/build -> a host directory in its writable
# root; run 2, started elsewhere (neither its cwd nor $HOME is above data/),
# names data/build as its root. data/ is root-owned but its ancestors are
# world-writable (the test directory), so the symlink is not a system one.
mkdir -m 0755 "$TESTDIR/dataB" "$TESTDIR/dataB/build" "$TESTDIR/hostB"
echo victim > "$TESTDIR/hostB/passwd"
run_fsg --rw "$TESTDIR/dataB" -- sh -c 'rm -r "$1/build"; ln -s "$2" "$1/build"' sh \
  "$TESTDIR/dataB" "$TESTDIR/hostB" 2>/dev/null
check "[1] control (repro B): run 1 replaced dataB/build by a symlink to a host directory" \
  test -L "$TESTDIR/dataB/build"
mkdir "$TESTDIR/elsewhereB"
err=$(cd "$TESTDIR/elsewhereB" && HOME="$TESTDIR/elsewhereB" run_fsg --rw "$TESTDIR/dataB/build" -- sh -c 'test -w "$1" && echo WRITABLE' sh \
  "$TESTDIR/hostB/passwd" 2>&1); rc=$?
is "[1] run 2 from another directory (cwd and HOME not above dataB) with --rw dataB/build: refused (2), naming the symlink" \
  "$rc/$(grep -c "the symlink '$TESTDIR/dataB/build' -> '$TESTDIR/hostB'" <<<"$err")" "2/1"
# review repro A: a CI workspace owned by another user (nobody, mode 755)
# under a root-owned chain; its symlink is not the system's either. Needs a
# root-owned, not group/other-writable chain (trusted_tmpdir).
if trusted_tmpdir; then
  BT=$TRUSTED
  mkdir -p "$BT/ci/ws" "$TESTDIR/hostA"
  ln -s "$TESTDIR/hostA" "$BT/ci/ws/build"
  chown -R nobody "$BT/ci/ws"
  out=$(cd "$BT/ci/ws" && run_fsg --profile read-only --rw ./build -- sh -c 'true' 2>&1); rc=$?
  chown nobody "$BT/ci"; chmod 0755 "$BT/ci"
  out2=$(cd "$BT/ci/ws" && run_fsg --profile read-only --rw ./build -- touch build/x 2>&1); rc2=$?
  is "[1] repro A: ws/ owned by nobody (755) with build -> host dir: refused (2), nothing written" \
    "$rc/$rc2/$(ls "$TESTDIR/hostA")" "2/2/"
  check "[1] ... the error names the symlink and its target" \
    grep -qF "the symlink '$BT/ci/ws/build' -> '$TESTDIR/hostA'" <<<"$out2"
  chown -R root "$BT/ci"
  out=$(cd "$BT/ci/ws" && run_fsg --profile read-only --rw ./build -- sh -c 'echo ok' 2>&1)
  is "[1] control: the same symlink in a root-owned 755 chain is trusted" "$out" "ok"
  out=$(cd "$BT/ci/ws" && run_fsg --profile read-only --rw . --ro ./build -- true 2>&1); rc=$?
  is "[1] ... but not when it lies in a writable root of the same run (2)" "$rc" "2"
else
  skip "[1] repro A: a workspace owned by nobody in a trusted chain" "root and a root-owned directory chain (build tree, /var/lib or /run)"
  skip "[1] ... the error names the symlink and its target" "as above"
  skip "[1] control: the same symlink in a root-owned 755 chain is trusted" "as above"
  skip "[1] ... but not when it lies in a writable root of the same run (2)" "as above"
fi
cd "$WORK"

# --- [2] in-place writes through hard links to files outside every writable root ---------------
mkdir "$TESTDIR/cache2" "$WORK/ws2" "$WORK/ws2/.venv"
echo "cache original" > "$TESTDIR/cache2/pkg.py"
ln "$TESTDIR/cache2/pkg.py" "$WORK/ws2/.venv/pkg.py"
echo "ctl" > "$TESTDIR/cache2/ctl.py"; ln "$TESTDIR/cache2/ctl.py" "$TESTDIR/ctl-link.py"
echo x >> "$TESTDIR/ctl-link.py"
is "[2] control: without the sandbox, appending through a hard link changes the other name" \
  "$(cat "$TESTDIR/cache2/ctl.py")" "ctl
x"
out=$(cd "$WORK/ws2" && run_fsg --json "$TESTDIR/r2.json" -- bash -c '
  for c in "echo x >> .venv/pkg.py" "true > .venv/pkg.py" "truncate -s 0 .venv/pkg.py" \
           "chmod 600 .venv/pkg.py" "touch .venv/pkg.py" \
           "python3 -c \"open(\\\".venv/pkg.py\\\", \\\"r+\\\").write(\\\"X\\\")\""; do
    if eval "$c" 2>/dev/null; then echo "allowed: $c"; else echo denied; fi
  done' 2>&1)
is "[2] append, O_TRUNC, truncate, chmod, touch and r+ through a hard link in a writable root: all refused" \
  "$out" "$(printf 'denied\n%.0s' 1 2 3 4 5 6 | head -c -1)"
is "[2] ... the file outside the roots is unchanged (content and mode)" \
  "$(cat "$TESTDIR/cache2/pkg.py")/$(stat -c %a "$TESTDIR/cache2/pkg.py")" "cache original/644"
is "[2] ... each refusal is a denial naming the file" \
  "$(json_get "$TESTDIR/r2.json" 'sorted(set((d["operation"], d["path"].endswith("/ws2/.venv/pkg.py")) for d in r["denials"] if "pkg.py" in d["path"]) - {("create", True)})')" \
  "[('open', True), ('setattr', True)]"
out=$(cd "$WORK/ws2" && run_fsg -- sh -c 'echo new > .venv/pkg.py.tmp && mv .venv/pkg.py.tmp .venv/pkg.py && cat .venv/pkg.py && echo more >> .venv/pkg.py && rm .venv/pkg.py && echo removed' 2>&1)
is "[2] replacing the name (new file, rename over it), then writing it, and unlink stay allowed" "$out" "new
removed"
is "[2] ... and the cache file is still unchanged" "$(cat "$TESTDIR/cache2/pkg.py")" "cache original"
out=$(cd "$WORK/ws2" && run_fsg -- sh -c 'echo a > a && ln a b && echo more >> a && chmod 600 b && cat b' 2>&1)
is "[2] links that are all writable names of the same directory (ln a b): writing is allowed" "$out" "a
more"

# git on a local clone (its objects are hard links of the source's): commit,
# repack and gc work as natively, and the source repository is untouched
if command -v git >/dev/null; then
  G="git -c user.email=t@example.com -c user.name=t"
  git init -q "$TESTDIR/src2" && (cd "$TESTDIR/src2" && echo a > a && $G add a && $G commit -qm a)
  git clone -q "$TESTDIR/src2" "$WORK/sb2" && git clone -q "$TESTDIR/src2" "$WORK/nat2"
  links=$(stat -c %h "$WORK"/sb2/.git/objects/??/* | sort -u | tr '\n' ' ')
  script='echo b >> a && '"$G"' commit -qam b && git repack -adq && git gc -q && git log --oneline | wc -l && git fsck 2>&1 | wc -l'
  nat=$(cd "$WORK/nat2" && bash -c "$script" 2>&1)
  sb=$(cd "$WORK/sb2" && run_fsg -- bash -c "$script" 2>&1)
  is "[2] git commit, repack and gc in a local clone whose objects are hard links ($links): as natively" \
    "$sb" "$nat"
  is "[2] ... the source repository is untouched" \
    "$(cd "$TESTDIR/src2" && git fsck 2>&1 | wc -l; git -C "$TESTDIR/src2" log --oneline | wc -l)" "0
1"
else
  skip "[2] git on a local clone" "git"
  skip "[2] ... the source repository is untouched" "git"
fi

# review L9: a user.* xattr set through a hard link is the other name's too
# (fsgate-run does not serve xattrs: `fsgate mount --xattr` does)
if [ "$(id -u)" = 0 ] && python3 -c 'import os,sys; os.setxattr(sys.argv[1], "user.fsgctl", b"1")' "$TESTDIR/ctl-link.py" 2>/dev/null; then
  is "[2] control: without the sandbox, an xattr set through a hard link shows on the other name" \
    "$(python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], "user.fsgctl").decode())' "$TESTDIR/cache2/ctl.py")" "1"
  mkdir "$TESTDIR/ws9" "$TESTDIR/mnt9"
  ln "$TESTDIR/cache2/ctl.py" "$TESTDIR/ws9/ctl9.py"
  timeout -k 5 60 "$FSGATE" mount --profile none --rw "$TESTDIR/ws9" --xattr "$TESTDIR/mnt9" &
  m9=$!
  wait_for "$TESTDIR/mnt9$TESTDIR/ws9/ctl9.py"
  out=$(python3 -c '
import os, sys
try:
    os.setxattr(sys.argv[1], "user.fsgx", b"evil"); print("allowed")
except OSError as e: print("denied", e.errno)' "$TESTDIR/mnt9$TESTDIR/ws9/ctl9.py" 2>&1)
  umount "$TESTDIR/mnt9" 2>/dev/null || umount -l "$TESTDIR/mnt9"
  wait "$m9" 2>/dev/null
  is "[2] setxattr through a hard link in a writable root: refused (EACCES), the other name unchanged" \
    "$out/$(python3 -c 'import os,sys; print("user.fsgx" in os.listxattr(sys.argv[1]))' "$TESTDIR/cache2/ctl.py")" "denied 13/False"
else
  skip "[2] control: xattr through a hard link" "root and user xattrs on $TESTDIR"
  skip "[2] setxattr through a hard link in a writable root" "root and user xattrs on $TESTDIR"
fi

# review H2: one host name reachable through two view inodes (ws/ bind-mounted
# as alias/, both writable roots) must be counted once in the link proof
if [ "$(id -u)" = 0 ]; then
  mkdir "$TESTDIR/outside2b" "$WORK/ws2b" "$WORK/alias2b"
  echo "outside original" > "$TESTDIR/outside2b/f"
  ln "$TESTDIR/outside2b/f" "$WORK/ws2b/f"
  echo ctl > "$TESTDIR/outside2b/ctl"; ln "$TESTDIR/outside2b/ctl" "$WORK/ws2b/ctl"
  if mount --bind "$WORK/ws2b" "$WORK/alias2b"; then
    echo more >> "$WORK/alias2b/ctl"
    is "[2] control: without the sandbox, appending through the bind-mounted name changes outside/" \
      "$(cat "$TESTDIR/outside2b/ctl")" "ctl
more"
    out=$(cd "$WORK" && run_fsg --rw ./ws2b --rw ./alias2b -- sh -c 'cat alias2b/f >/dev/null; echo PWNED >> ws2b/f && echo allowed' 2>&1)
    umount "$WORK/alias2b"
    is "[2] the same name seen through ws/ and a bind mount alias/: not two links, the append is refused" \
      "$(cat "$TESTDIR/outside2b/f")/$(grep -c allowed <<<"$out")" "outside original/0"
  else
    skip "[2] control: appending through a bind-mounted name" "mount --bind failed"
    skip "[2] the same name through ws/ and a bind mount alias/" "mount --bind failed"
  fi
else
  skip "[2] control: appending through a bind-mounted name" "mount --bind (root)"
  skip "[2] the same name through ws/ and a bind mount alias/" "mount --bind (root)"
fi

# --- [3] hard links to files under a literally denied directory --------------------------------
mkdir "$TESTDIR/secrets3" "$TESTDIR/secrets3/deep" "$TESTDIR/other3"
echo "$SECRET-3" > "$TESTDIR/secrets3/deep/key"
ln "$TESTDIR/secrets3/deep/key" "$TESTDIR/other3/backup"
out=$(run_fsg --ro "$TESTDIR/other3" -- cat "$TESTDIR/other3/backup" 2>&1)
is "[3] control: without the deny, the other link is readable" "$out" "$SECRET-3"
out=$(run_fsg --ro "$TESTDIR/other3" --deny-read "$TESTDIR/secrets3" --json "$TESTDIR/r3.json" -- \
      cat "$TESTDIR/other3/backup" 2>&1)
is "[3] --deny-read DIR: another link of a file deep in DIR is denied by identity" \
  "$out" "cat: $TESTDIR/other3/backup: Permission denied"
is "[3] ... recorded as a denial" \
  "$(json_get "$TESTDIR/r3.json" '[d["path"] for d in r["denials"] if d["path"].endswith("backup")][:1]')" \
  "['$TESTDIR/other3/backup']"
mkdir "$TESTDIR/big3"
python3 -c 'import os,sys
for i in range(100001): os.close(os.open("%s/f%06d" % (sys.argv[1], i), os.O_CREAT | os.O_WRONLY))' "$TESTDIR/big3"
mkdir "$TESTDIR/sec3" "$WORK/ws3"
echo "$SECRET-3b" > "$TESTDIR/sec3/key"
ln "$TESTDIR/sec3/key" "$WORK/ws3/backup"
# review H3: a big denied directory listed first must not starve a later one
out=$(run_fsg --deny-read "$TESTDIR/big3" --deny-read "$TESTDIR/sec3" --rw "$WORK/ws3" -- \
      cat "$WORK/ws3/backup" 2>&1); rc=$?
is "[3] a denied directory with more than 100000 entries: the run is refused (125), the secret not shown" \
  "$rc/$(grep -c "$SECRET-3b" <<<"$out")" "125/0"
check "[3] ... stderr names the directory and the fix" \
  grep -q "deny-read directory '$TESTDIR/big3' holds more than 100000 entries.*FSGATE_DENIED_SCAN_MAX" <<<"$out"
out=$(FSGATE_DENIED_SCAN_MAX=200000 run_fsg --deny-read "$TESTDIR/big3" --deny-read "$TESTDIR/sec3" \
      --rw "$WORK/ws3" -- cat "$WORK/ws3/backup" 2>&1); rc=$?
is "[3] FSGATE_DENIED_SCAN_MAX=200000: both directories scanned, the link of sec3/key is denied" \
  "$rc/$out" "1/cat: $WORK/ws3/backup: Permission denied"
out=$(FSGATE_DENIED_SCAN_MAX=off run_fsg --deny-read "$TESTDIR/big3" --deny-read "$TESTDIR/sec3" \
      --rw "$WORK/ws3" -- cat "$WORK/ws3/backup" 2>&1); rc=$?
is "[3] FSGATE_DENIED_SCAN_MAX=off: the documented opt-out, no scan (the link is readable)" \
  "$rc/$out" "0/$SECRET-3b"
rm -rf "$TESTDIR/big3"

# --- [6] a procfs or sysfs mounted below a root is not served ---------------------------------
mkdir "$WORK/hostproc" "$WORK/hostsys"
if mount -t proc proc "$WORK/hostproc" 2>/dev/null && mount -t sysfs sysfs "$WORK/hostsys" 2>/dev/null; then
  ctl=$(readlink "$WORK/hostproc/$$/cwd")
  out=$(run_fsg --json "$TESTDIR/r6.json" -- sh -c "
    readlink hostproc/$$/cwd 2>&1 || echo proc-denied
    ls hostsys/kernel >/dev/null || echo sys-denied" 2>&1)
  umount "$WORK/hostproc" "$WORK/hostsys" 2>/dev/null || umount -l "$WORK/hostproc" "$WORK/hostsys"
  is "[6] control: the host procfs shows this test's cwd" "$ctl" "$WORK"
  is "[6] a procfs and a sysfs mounted under the working directory: both denied (EACCES)" "$out" \
    "proc-denied
ls: cannot access 'hostsys/kernel': Permission denied
sys-denied"
  is "[6] ... recorded as denials naming the file system" \
    "$(json_get "$TESTDIR/r6.json" 'sorted(set(d["operation"] for d in r["denials"] if "/host" in d["path"]))')" \
    "['lookup (procfs mount)', 'lookup (sysfs mount)']"
else
  umount "$WORK/hostproc" 2>/dev/null
  for d in "[6] control" "[6] procfs and sysfs under the cwd" "[6] ... recorded"; do skip "$d" "mount -t proc/sysfs (root)"; done
fi

# --- review M6: the reader of a --capture run goes away -----------------------------------------
out=$(cd "$WORK" && timeout -k 5 30 "$FSGATE_RUN" --quiet --capture --json "$TESTDIR/m6.json" -- yes \
      | head -1; echo "${PIPESTATUS[0]}")
is "[9] --capture -- yes | head -1: the command gets SIGPIPE and fsgate-run ends (141, not a timeout)" \
  "$out" "y
141"
is "[9] ... the capture says where the stream was cut" \
  "$(json_get "$TESTDIR/m6.json" '"the reader of this stream went away" in r["stdout"]')" "True"

# --- review M5: a signal while fsgate-run waits for a stalled reader ---------------------------
mkfifo "$TESTDIR/m5.fifo"
exec 7<>"$TESTDIR/m5.fifo"   # a reader that never reads
( cd "$WORK" && exec "$FSGATE_RUN" --quiet --capture --json "$TESTDIR/m5.json" -- \
    sh -c 'head -c 200000 /dev/zero; touch "$1"' sh "$TESTDIR/m5.done" >"$TESTDIR/m5.fifo" ) &
m5=$!
wait_for "$TESTDIR/m5.done"
kill -TERM "$m5"
gone=no
for i in $(seq 500); do kill -0 "$m5" 2>/dev/null || { gone=yes; break; }; sleep 0.02; done
[ $gone = yes ] || kill -KILL "$m5" 2>/dev/null
wait "$m5" 2>/dev/null
exec 7<&-
is "[9] SIGTERM while only a stalled reader is waited for: fsgate-run ends (within 10 s)" "$gone" "yes"
is "[9] ... and the report is written" "$(json_get "$TESTDIR/m5.json" 'r["exit_code"] is not None')" "True"

# --- review L9: a root that is itself a procfs mount -------------------------------------------
if [ "$(id -u)" = 0 ] && mkdir "$TESTDIR/proc9" && mount -t proc proc "$TESTDIR/proc9" 2>/dev/null; then
  check "[6] control: the procfs mounted at proc9 shows the host's processes" test -e "$TESTDIR/proc9/1/status"
  err=$(run_fsg --ro "$TESTDIR/proc9" -- true 2>&1); rc=$?
  umount "$TESTDIR/proc9" 2>/dev/null || umount -l "$TESTDIR/proc9"
  is "[6] --ro of a procfs mount itself: refused at setup (125), naming the root" \
    "$rc/$(grep -c "root '$TESTDIR/proc9' (--ro) is a procfs mount" <<<"$err")" "125/1"
else
  skip "[6] control: a procfs root" "mount -t proc (root)"
  skip "[6] --ro of a procfs mount itself" "mount -t proc (root)"
fi

done_testing
