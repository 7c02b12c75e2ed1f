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

done_testing
