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
  umount "$small"
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
  "$(json_get "$TESTDIR/flood2.json" '(len(r["denials"]), r["denials_total"] - r["denials_unlisted"] == sum(d["count"] for d in r["denials"]), r["denials_unlisted"] >= 100)')" "(10000, True, True)"
check "[5] ... and stderr says the bound was hit" grep -q "more than 10000 distinct denials" "$TESTDIR/flood2.err"

# --- [8] the runner's own setup is not the command's denial -----------------------------------
# A noexec bind mount under the working directory of a denied directory: I
# binds the place with noexec (host-mounts.c) and meets the denial (by
# identity) while setting up; `-- true` denied nothing.
mkdir "$TESTDIR/s8" "$WORK/nx8"; echo "$SECRET" > "$TESTDIR/s8/key"
if mount --bind "$TESTDIR/s8" "$WORK/nx8" 2>/dev/null && mount -o remount,bind,noexec "$WORK/nx8" 2>/dev/null; then
  run_fsg --deny-read "$TESTDIR/s8" --json "$TESTDIR/r8.json" -- true 2>/dev/null
  run_fsg --deny-read "$TESTDIR/s8" --json "$TESTDIR/r8b.json" -- cat nx8/key >/dev/null 2>&1
  umount "$WORK/nx8"
  is "[8] -- true with a noexec mount of a denied directory under the cwd: sandbox_denied false, no denial" \
    "$(json_get "$TESTDIR/r8.json" '(r["sandbox_denied"], r["denials"], [d["command"] for d in r["setup_denials"]][:1])')" \
    "(False, [], ['fsgate-init'])"
  is "[8] ... the command's own access to it is still a denial, with the command's name" \
    "$(json_get "$TESTDIR/r8b.json" '(r["sandbox_denied"], sorted(set(d["command"] for d in r["denials"])))')" \
    "(True, ['cat'])"
else
  umount "$WORK/nx8" 2>/dev/null
  skip "[8] -- true with a noexec mount of a denied directory under the cwd" "mount --bind (root)"
  skip "[8] ... the command's own access to it is still a denial" "mount --bind (root)"
fi

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
  grep -qF "goes through the symlink '$WORK/p1/build' -> '$TESTDIR/host1', in a directory you can write" <<<"$err"
printf '[filesystem]\nwritable = ?${CWD}/build\n' > "$TESTDIR/p1.ini"
err=$(run_fsg --profile read-only --policy "$TESTDIR/p1.ini" -- touch build/planted 2>&1); rc=$?
is "[1] ... an optional ?\${CWD}/build root in a policy file: refused too, naming FILE:LINE" \
  "$rc/$(grep -c "p1.ini:2: writable root '$WORK/p1/build' goes through the symlink" <<<"$err")" "2/1"
"$FSGATE" explain --profile read-only --rw ./build ./build >/dev/null 2>&1; rc=$?
is "[1] ... fsgate explain agrees (policy error, 2)" "$rc" "2"
out=$(run_fsg --profile none -C /usr --ro /bin --ro /lib --ro /lib64 --ro /usr -- /bin/sh -c 'echo system-ok' 2>&1)
is "[1] system symlinks (/bin -> usr/bin, /lib64) still work as roots" "$out" "system-ok"
cd "$WORK"

done_testing
