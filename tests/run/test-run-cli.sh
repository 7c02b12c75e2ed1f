#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Bad input on the command line of fsgate-run and fsgate (integration suite):
# every option with a missing, empty, huge (100 KB) or malformed value,
# unknown options, a missing `--`, a command that does not exist, a working
# directory outside the view. Each must give one error line ("PROG: ...",
# plus at most GOption's "Try ... --help" hint) and the documented status
# (2 usage, 125 setup, 127 not found), never a crash (status >= 128 or a
# sanitizer report), and never run the command.
. "$(dirname "$0")/libtest.sh"
require_fsgate

FSGATE=${FSGATE:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/fsgate/fsgate}
HUGE=$(head -c 100000 /dev/zero | tr '\0' a)
RAN="$WORK/ran" # inside the writable root, so a run would create it

# expect_err STATUS DESC PROG ARGS...: one error line, STATUS, command not run.
expect_err () {
  local want=$1 desc=$2; shift 2
  local err rc lines
  rm -f "$RAN"
  err=$(timeout -k 5 30 "$@" 2>&1 >/dev/null); rc=$?
  lines=$(printf '%s' "$err" | grep -vcE "^(Try '|Usage: )")
  if [ "$rc" = "$want" ] && [ "$lines" = 1 ] && [ ! -e "$RAN" ] &&
     ! grep -qE 'Sanitizer|runtime error|Assertion|CRITICAL|Segmentation' <<<"$err" &&
     grep -q "^$(basename "$1")" <<<"$err"; then
    ok "$desc"
  else
    not_ok "$desc"
    diag "status $rc (want $want), $lines error lines, ran: $([ -e "$RAN" ] && echo yes || echo no)"
    diag "$(head -c 300 <<<"$err")"
  fi
}

echo "TOPSECRET-$MARK" > "$WORK/.env"
for opt in -C --cwd --json --pass-fd --profile -p --policy --rw --ro --deny-read --deny-write \
           --timeout --kill-after --output-cap; do
  expect_err 2 "fsgate-run $opt without a value: usage error" "$FSGATE_RUN" "$opt"
  case $opt in
    -C|--cwd) empty=125; huge=125; bad=125 ;;
    --json) empty=2; huge=125; bad=125 ;;
    --deny-read|--deny-write) empty=2; huge=ok; bad=2 ;;
    *) empty=2; huge=2; bad=2 ;;
  esac
  expect_err $empty "fsgate-run $opt '': error $empty" "$FSGATE_RUN" "$opt" "" -- touch "$RAN"
  if [ "$huge" = ok ]; then
    # a 100 KB pattern is valid (it can never match a name): the run is the normal one
    out=$(run_fsg "$opt" "$HUGE" -- sh -c "touch '$RAN'; cat .env; echo rc=\$?" 2>&1)
    is "fsgate-run $opt <100 KB>: accepted, runs with the default rules still in place" "$out" \
      "cat: .env: Permission denied
rc=1"
  else
    expect_err $huge "fsgate-run $opt <100 KB>: error $huge" "$FSGATE_RUN" "$opt" "$HUGE" -- touch "$RAN"
  fi
  case $opt in
    -C|--cwd) badv=$'/no\nsuch\377dir' ;;
    --json) badv="/nonexistent-$MARK/report.json" ;;
    --pass-fd) badv="-1" ;;
    --profile) badv="workspace-write " ;;
    -p|--policy) badv="/dev/null/x" ;;
    --rw|--ro) badv="/nonexistent-$MARK" ;;
    --deny-read|--deny-write) badv="a/../b" ;;
    --timeout|--kill-after) badv="1e99" ;;
    --output-cap) badv="-1" ;;
  esac
  expect_err $bad "fsgate-run $opt $(printf %q "$badv"): error $bad" "$FSGATE_RUN" "$opt" "$badv" -- touch "$RAN"
done
expect_err 2 "fsgate-run --timeout 99999999999999999999s: overflow is an error" "$FSGATE_RUN" --timeout 99999999999999999999s -- touch "$RAN"
expect_err 2 "fsgate-run --output-cap 99999999999GiB: overflow is an error" "$FSGATE_RUN" --output-cap 99999999999GiB -- touch "$RAN"
# issue 14 item 10: a cap above what capture can hold (it aborted the runner
# once the output passed 4 GiB) is refused up front, also from a policy file
expect_err 2 "fsgate-run --output-cap 5GiB: above the 1GiB maximum, usage error" "$FSGATE_RUN" --output-cap 5GiB --capture --json "$TESTDIR/cap5.json" -- touch "$RAN"
printf '[output]\noutput-cap = 4097MiB\n' > "$TESTDIR/bigcap.ini"
expect_err 2 "output-cap = 4097MiB in a policy file: usage error" "$FSGATE_RUN" --policy "$TESTDIR/bigcap.ini" --capture --json "$TESTDIR/cap4.json" -- touch "$RAN"
check "... and the error names the file, the line and the maximum" \
  grep -q "bigcap.ini:2: key 'output-cap' in \[output\]: '4097MiB' is larger than fsgate-run can capture (at most 1GiB" \
  <(timeout 30 "$FSGATE_RUN" --policy "$TESTDIR/bigcap.ini" -- true 2>&1)
out=$(run_fsg --output-cap 1GiB --capture --json "$TESTDIR/cap1g.json" -- echo hi 2>/dev/null)
is "--output-cap 1GiB (the maximum) is accepted" "$out/$(json_get "$TESTDIR/cap1g.json" 'r["stdout"]')" "hi/hi"
expect_err 2 "fsgate-run --pass-fd 99999999999: not an fd" "$FSGATE_RUN" --pass-fd 99999999999 -- touch "$RAN"
out=$(cd / && timeout 60 "$FSGATE_RUN" -- true 2>&1); rc=$?
is "fsgate-run from / on the default profile runs, and warns that / is writable" \
  "$rc $(echo "$out" | grep -c "warning: '/' is writable")" "0 1"
out=$(cd "$TESTDIR" && timeout 60 "$FSGATE_RUN" -- true 2>&1)
is "... and says nothing from a project directory" "$out" ""
many=(); for i in $(seq 61); do many+=(--pass-fd 1); done
expect_err 2 "fsgate-run with 61 --pass-fd: more than it can keep" "$FSGATE_RUN" "${many[@]}" -- touch "$RAN"
expect_err 2 "fsgate-run --rw with a non-UTF-8 value: usage error" "$FSGATE_RUN" --rw $'\377' -- touch "$RAN"
expect_err 2 "fsgate-run unknown option" "$FSGATE_RUN" --no-such-option -- touch "$RAN"
expect_err 2 "fsgate-run unknown short option" "$FSGATE_RUN" -Z -- touch "$RAN"
expect_err 2 "fsgate-run no command" "$FSGATE_RUN"
expect_err 2 "fsgate-run only --" "$FSGATE_RUN" --
expect_err 2 "fsgate-run empty command name" "$FSGATE_RUN" -- ""
expect_err 127 "fsgate-run a command that does not exist: 127" "$FSGATE_RUN" -- "no-such-command-$MARK"
expect_err 127 "fsgate-run a command path that does not exist: 127" "$FSGATE_RUN" -- "/nonexistent-$MARK/cmd"
echo "TOPSECRET-$MARK" > "$WORK/.env"
mkdir -p "$WORK/denied" "$TESTDIR/outside"
expect_err 125 "fsgate-run -C a denied directory: 125" "$FSGATE_RUN" --deny-read "$WORK/denied" -C "$WORK/denied" -- touch "$RAN"
expect_err 125 "fsgate-run -C a directory outside the view: 125" "$FSGATE_RUN" --profile none --rw "$WORK" -C "$TESTDIR/outside" -- touch "$RAN"
expect_err 125 "fsgate-run -C /nonexistent: 125" "$FSGATE_RUN" -C "/nonexistent-$MARK" -- touch "$RAN"
expect_err 125 "fsgate-run -C a file: 125" "$FSGATE_RUN" -C /etc/hostname -- touch "$RAN"

# Without `--`, options end at the command (strict POSIX): the command's own
# options are not taken by fsgate-run, and the sandbox is the same.
out=$(run_fsg sh -c 'echo "$0 $1"; grep ^NoNewPrivs /proc/self/status' --rw / 2>&1)
is "no '--': the command's arguments stay the command's (no --rw / taken)" "$out" "--rw /
NoNewPrivs:	1"
out=$(run_fsg -- sh -c 'echo x > /etc/fsgate-cli-test' 2>&1); rc=$?
check "a command argument that looks like an option does not widen the sandbox" test "$rc" -ne 0 -a ! -e /etc/fsgate-cli-test

# fsgate itself.
"$FSGATE" >/dev/null 2>&1; is "fsgate without a command: usage (2)" "$?" "2"
expect_err 2 "fsgate unknown command" "$FSGATE" no-such-command
expect_err 2 "fsgate unknown option" "$FSGATE" --no-such-option
expect_err 2 "fsgate explain without a path" "$FSGATE" explain
expect_err 2 "fsgate explain --rw ''" "$FSGATE" explain --rw "" /
expect_err 2 "fsgate explain --profile <100 KB>" "$FSGATE" explain --profile "$HUGE" /
expect_err 2 "fsgate explain --timeout x" "$FSGATE" explain --timeout x /
expect_err 2 "fsgate policy -p /nonexistent" "$FSGATE" policy -p "/nonexistent-$MARK"
expect_err 2 "fsgate policy --deny-read ''" "$FSGATE" policy --deny-read ""
expect_err 2 "fsgate mount without a mountpoint" "$FSGATE" mount
expect_err 2 "fsgate mount /nonexistent" "$FSGATE" mount "/nonexistent-$MARK"
expect_err 2 "fsgate mount --audit ''" "$FSGATE" mount --audit "" "$TESTDIR/outside"
expect_err 2 "fsgate mount --rw <100 KB>" "$FSGATE" mount --rw "$HUGE" "$TESTDIR/outside"
expect_err 2 "fsgate mount with an extra argument" "$FSGATE" mount "$TESTDIR/outside" extra
expect_err 2 "fsgate mount --stats - without -f" "$FSGATE" mount --stats - "$TESTDIR/outside"
expect_err 125 "fsgate mount --stats in a missing directory" "$FSGATE" mount --stats "/nonexistent-$MARK/s" "$TESTDIR/outside"

out=$(timeout 10 "$FSGATE" explain "$HUGE" $'\377\n' 2>&1); rc=$?
check "fsgate explain of a 100 KB path and of odd bytes does not crash (status $rc)" test "$rc" -lt 128
is "no FUSE mount left" "$(fsg_mounts)" "0"
done_testing
