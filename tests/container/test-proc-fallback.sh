#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The /proc fallback without a container runtime: bwrap's --proc covers parts
# of its /proc with read-only mounts exactly as Podman and Docker do, so the
# kernel refuses fsgate-run a fresh /proc there. The run must go on with the
# outer /proc (warning, doctor line, "proc" in the report), refuse with
# --no-proc-fallback, keep /proc/sys read-only, and keep every process
# outside the sandbox out of the command's reach (with a positive control:
# the same reads work from outside fsgate-run).
set -u

. "$(dirname "$0")/../lib/tap.sh"

FSGATE_RUN=${FSGATE_RUN:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/runner/fsgate-run}

bail_or_skip () {
  if [ -n "${FSGATE_TESTS_MUST_RUN:-}" ]; then
    echo "Bail out! $1, and FSGATE_TESTS_MUST_RUN is set"
    exit 1
  fi
  echo "1..0 # SKIP $1"
  exit 0
}

command -v bwrap >/dev/null || bail_or_skip "needs bwrap (apt-get install bubblewrap)"
bwrap --dev-bind / / --unshare-user --unshare-pid --proc /proc true 2>/dev/null \
  || bail_or_skip "needs bwrap with user and pid namespaces"
"$FSGATE_RUN" --doctor >/dev/null 2>&1 || bail_or_skip "fsgate-run --doctor fails on the host"

TESTDIR=$(mktemp -d "${TMPDIR:-/tmp}/fsgate-proc-test.XXXXXX")
trap 'rm -rf "$TESTDIR"' EXIT
trap 'exit 1' INT TERM HUP PIPE
cd "$TESTDIR"

# bw COMMAND...: in a bwrap with its own masked /proc.
bw () { timeout -k 5 60 bwrap --dev-bind / / --unshare-user --unshare-pid --proc /proc --die-with-parent "$@"; }

out=$(bw "$FSGATE_RUN" --no-proc-fallback --json "$TESTDIR/r0.json" -- true 2>&1); rc=$?
is "masked /proc, --no-proc-fallback: exit 125" "$rc" 125
check "... the message says why and how to unmask" \
  grep -q "mounting /proc in the view: Operation not permitted. Fix: .*unmask=ALL.*systempaths=unconfined" <<<"$out"
is "... the report has no /proc" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["proc"])' "$TESTDIR/r0.json")" "None"

out=$(bw "$FSGATE_RUN" --json "$TESTDIR/r1.json" -- sh -c 'echo ran > ran.txt; cat /proc/self/comm' 2>"$TESTDIR/err"); rc=$?
is "masked /proc: the command runs with the outer /proc" "$rc:$out:$(cat ran.txt 2>/dev/null)" "0:cat:ran"
is "... one warning line, naming --no-proc-fallback" \
  "$(grep -c 'warning: a fresh /proc cannot be mounted here.*--no-proc-fallback' "$TESTDIR/err")" 1
is "... the report says proc = container" \
  "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["proc"])' "$TESTDIR/r1.json")" "container"
out=$(bw "$FSGATE_RUN" -- awk '$5 == "/proc/sys" { print $6 }' /proc/self/mountinfo 2>/dev/null)
check "... /proc/sys is read-only in the view" grep -q "^ro," <<<"$out"

out=$(bw "$FSGATE_RUN" --doctor 2>&1); rc=$?
is "masked /proc: --doctor passes" "$rc" 0
check "... with a warn line for /proc" grep -q "^warn  /proc: a fresh /proc is refused" <<<"$out"
out=$(bw "$FSGATE_RUN" --doctor --no-proc-fallback 2>&1); rc=$?
is "masked /proc: --doctor --no-proc-fallback fails" "$rc" 125
check "... with a FAIL line for /proc" grep -q "^FAIL  /proc: .*--no-proc-fallback is given" <<<"$out"

out=$("$FSGATE_RUN" --json "$TESTDIR/r2.json" -- true 2>&1)
is "host: no warning, and the report says proc = fresh" \
  "$out:$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["proc"])' "$TESTDIR/r2.json")" ":fresh"

# A process outside the sandbox, same uid, same environment secret.
out=$(FSGATE_TEST_SECRET=s3cr3t bw sh -c '
  sleep 1000 & sp=$!
  until [ "$(cat /proc/$sp/comm 2>/dev/null)" = sleep ]; do :; done # its exec is done
  echo "outside $(tr "\0" "\n" < /proc/$sp/environ | grep -c FSGATE_TEST_SECRET) $(ls /proc/$sp/root/ | grep -c "^etc$") $(readlink /proc/$sp/exe)"
  "$0" -- sh -c "
    ls -d /proc/$sp >/dev/null 2>&1 && echo listed
    tr \"\\0\" \"\\n\" < /proc/$sp/environ 2>/dev/null | grep -c FSGATE_TEST_SECRET || echo environ refused
    ls /proc/$sp/root/ >/dev/null 2>&1 && echo root read || echo root refused
    readlink /proc/$sp/exe >/dev/null 2>&1 && echo exe read || echo exe refused
    cat /proc/$sp/fd/1 >/dev/null 2>&1 && echo fd read || echo fd refused
    cat /proc/$sp/maps >/dev/null 2>&1 && echo maps read || echo maps refused
    cat /proc/$sp/mem >/dev/null 2>&1 && echo mem read || echo mem refused
    kill -0 $sp 2>/dev/null && echo signalled || echo no signal"
  kill $sp' "$FSGATE_RUN" 2>/dev/null)
is "outer /proc: positive control, the reads work outside fsgate-run" \
  "$(printf '%s\n' "$out" | head -n 1)" "outside 1 1 $(readlink -f "$(command -v sleep)")"
is "outer /proc: the command lists the process but cannot reach it" \
  "$(printf '%s\n' "$out" | tail -n +2 | tr '\n' ' ')" \
  "listed 0 environ refused root refused exe refused fd refused maps refused mem refused no signal "

# Writes under the outer /proc: oom_score_adj, clear_refs and friends are
# checked only against the target's owner, not ptrace, so only the Landlock
# domain keeps them from a process outside the sandbox. Positive control:
# the same writes work from the bwrap shell outside fsgate-run.
WFILES="oom_adj oom_score_adj autogroup coredump_filter clear_refs sched"
out=$(bw sh -c '
  sleep 1000 & sp=$!
  until [ "$(cat /proc/$sp/comm 2>/dev/null)" = sleep ]; do :; done
  w () { case $1 in oom_score_adj) echo 500;; oom_adj) echo 8;; autogroup) echo 5;; coredump_filter) echo 0x33;; clear_refs) echo 1;; sched) echo 0;; esac; }
  printf "outside"; for f in '"$WFILES"'; do w $f > /proc/$sp/$f 2>/dev/null && printf " %s" $f; done; echo
  "$0" --json "$1" -- sh -c "
    printf inside
    for f in '"$WFILES"'; do
      case \$f in oom_score_adj) v=600;; oom_adj) v=9;; autogroup) v=6;; coredump_filter) v=0x23;; clear_refs) v=1;; sched) v=0;; esac
      echo \$v > /proc/$sp/\$f 2>/dev/null && printf \" %s\" \$f
    done
    n=0; for p in \$(ls /proc | grep -E \"^[0-9]+\$\"); do echo 900 > /proc/\$p/oom_score_adj 2>/dev/null && n=\$((n+1)); done
    echo 1 > /proc/self/oom_score_adj 2>/dev/null && printf \" self\"
    echo \" any=\$n\""
  echo "after $(cat /proc/$sp/oom_score_adj)"
  kill $sp' "$FSGATE_RUN" "$TESTDIR/r3.json" 2>/dev/null)
is "outer /proc writes: positive control, they work outside fsgate-run" \
  "$(printf '%s\n' "$out" | head -n 1)" "outside $WFILES"
is "outer /proc writes: the command can write none of them, nor its own" \
  "$(printf '%s\n' "$out" | sed -n 2p)" "inside any=0"
is "... the outside process keeps the value set outside" "$(printf '%s\n' "$out" | sed -n 3p)" "after 500"
is "... the report says proc = container, landlock = true" \
  "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["proc"], d["landlock"])' "$TESTDIR/r3.json")" \
  "container True"
is "host: the report says landlock = false" \
  "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["landlock"])' "$TESTDIR/r2.json")" "False"

# What the write block must not break: writes in the view, rename and link
# across directories (Landlock's REFER), reopening stdout and stderr.
# Compared with the same commands without the fallback (fresh /proc).
real_tools='
  mkdir -p a b && echo x > a/g && ln a/g b/g && echo ln=$?
  python3 -c "import os; os.rename(\"a/g\", \"b/h\"); print(\"rename\")"
  mv b/h a/h && echo mv=$?
  echo y >> a/h && : > a/h && echo write=$?
  echo out >> /dev/stdout; echo err >> /dev/stderr
  echo tmp > /tmp/t && cat /tmp/t'
mkdir "$TESTDIR/host" "$TESTDIR/fb"
host_out=$(cd "$TESTDIR/host" && "$FSGATE_RUN" -- sh -c "$real_tools" 2>&1 >"$TESTDIR/host.out"; cat "$TESTDIR/host.out")
fb_out=$(cd "$TESTDIR/fb" && bw "$FSGATE_RUN" -- sh -c "$real_tools" 2>&1 >"$TESTDIR/fb.out" | grep -v '^fsgate-run: warning'; cat "$TESTDIR/fb.out")
is "fallback: ln, os.rename, mv across directories, writes, /dev/stdout as on the host" "$fb_out" "$host_out"
check "... and they did run" grep -q "^rename$" <<<"$host_out"

# The fallback only inside a container's own pid namespace: on a host whose
# /proc has a mount over part of it, the kernel refuses a fresh /proc too,
# but binding that /proc would show every host process.
if unshare -m --propagation private true 2>/dev/null; then
  hostmask='mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys && exec "$@"'
  out=$(unshare -m --propagation private sh -c "$hostmask" sh \
          "$FSGATE_RUN" --json "$TESTDIR/r4.json" -- sh -c 'ls /proc | grep -c "^[0-9]"' 2>&1); rc=$?
  is "host /proc with a mount over /proc/sys: exit 125, no fallback" "$rc" 125
  check "... the message says why and what to change" \
    grep -q "not a container's own.*every process of the host.*Fix: .*own pid namespace" <<<"$out"
  is "... the report has no /proc" \
    "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["proc"])' "$TESTDIR/r4.json")" "None"
  out=$(unshare -m -p -f --propagation private sh -c "$hostmask" sh "$FSGATE_RUN" -- true 2>&1); rc=$?
  is "new pid namespace but the host's /proc: exit 125 too" "$rc" 125
else
  skip "host /proc with a mount over /proc/sys" "needs unshare -m (root)"
  skip "... the message" "needs unshare -m"
  skip "... the report" "needs unshare -m"
  skip "new pid namespace but the host's /proc" "needs unshare -m"
fi

# fsgate-run and fsgate-setup are not dumpable: a non-root command cannot
# write their owner-checked /proc files even without Landlock. Non-root run
# needs /dev/fuse usable by nobody: a private node bound over it.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && chmod 755 "$TESTDIR" \
   && unshare -m --propagation private sh -c "mknod -m 666 '$TESTDIR/fuse' c 10 229 && mount --bind '$TESTDIR/fuse' /dev/fuse" 2>/dev/null; then
  out=$(cd / && timeout -k 5 60 unshare -m --propagation private sh -c "mount --bind '$TESTDIR/fuse' /dev/fuse && exec \"\$@\"" sh \
    setpriv --reuid 65534 --regid 65534 --clear-groups \
    bwrap --dev-bind / / --unshare-user --unshare-pid --proc /proc --die-with-parent sh -c '
      sleep 1000 & sp=$!
      "$0" -C / -- sleep 1000 2>/dev/null & rp=$!
      until pgrep -x fsgate-init >/dev/null; do :; done
      printf "control"; echo 500 > /proc/$sp/oom_score_adj && printf " ok"; echo
      for c in fsgate-run fsgate-setup fsgate-fuse fsgate-init; do
        { echo 500 > /proc/$(pgrep -x $c)/oom_score_adj; } 2>/dev/null && echo "$c writable" || echo "$c refused"
      done
      kill $rp $sp; wait' "$FSGATE_RUN" 2>&1)
  is "non-root: positive control, a same-uid process's oom_score_adj is writable" \
    "$(printf '%s\n' "$out" | head -n 1)" "control ok"
  is "non-root: the runner's processes are not dumpable" "$(printf '%s\n' "$out" | tail -n +2 | tr '\n' ' ')" \
    "fsgate-run refused fsgate-setup refused fsgate-fuse refused fsgate-init refused "
else
  skip "non-root: positive control" "needs root, setpriv and mknod in a mount namespace"
  skip "non-root: the runner's processes are not dumpable" "needs root, setpriv and mknod"
fi

done_testing
