# SPDX-License-Identifier: LGPL-2.1-or-later
#
# TAP helpers for the fsgate-run shell tests (sourced). Each test gets its own
# directory under $TMPDIR (world-accessible, so the unprivileged-user tests
# can use it), and everything it started is killed and removed on exit, also
# when the test fails.

set -u

FSGATE_RUN=${FSGATE_RUN:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/runner/fsgate-run}
TRY_SYSCALL=${TRY_SYSCALL:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/tests/run/try-syscall}
export FSGATE_RUN TRY_SYSCALL

. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
_bg_pids=()

# Remember a background process so the cleanup kills it.
track () { _bg_pids+=("$1"); }

_cleanup () {
  local p
  for p in "${_bg_pids[@]}"; do
    kill -KILL "$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  if [ -n "${TESTDIR:-}" ] && [ -d "$TESTDIR" ]; then
    # nothing of ours is ever mounted on the host; refuse to recurse into a mount
    if grep -q " $TESTDIR" /proc/self/mountinfo; then
      echo "# BUG: a mount was left under $TESTDIR"
      grep " $TESTDIR" /proc/self/mountinfo | awk '{print $5}' | sort -r | xargs -r -n1 umount -l
    fi
    rm -rf "$TESTDIR"
  fi
  if [ -n "${_trusted_dir:-}" ] && [ -d "$_trusted_dir" ]; then rm -rf "$_trusted_dir"; fi
}
trap _cleanup EXIT

# trusted_tmpdir: make TRUSTED a new directory on the trusted system chain
# (root-owned, not group/other-writable up to /), where a symlink may choose
# a root: under $FSGATE_BUILDDIR when that chain is trusted, else under
# /var/lib or /run (a clone under /var/tmp is not). Fails when not root or
# none is; removed by the cleanup. Call it in this shell, not in $(...).
_trusted_dir=
TRUSTED=
trusted_tmpdir () {
  local base d
  [ "$(id -u)" = 0 ] || return 1
  for base in "${FSGATE_BUILDDIR:-}" /var/lib /run; do
    [ -n "$base" ] && base=$(realpath "$base" 2>/dev/null) || continue
    d=$base
    while :; do
      [ "$(stat -c %u "$d")" = 0 ] && [ $(( 0$(stat -c %a "$d") & 022 )) = 0 ] || continue 2
      [ "$d" = / ] && break
      d=$(dirname "$d")
    done
    _trusted_dir=$(mktemp -d "$base/fsgate-trusted.XXXXXX") || continue
    chmod 0755 "$_trusted_dir"
    TRUSTED=$_trusted_dir
    return 0
  done
  return 1
}

# Not under /tmp: fsgate-run gives every run a private /tmp showing only the
# roots below it, and the tests need the host's view of their own files
# (read-only through the profile's `/`) wherever the working directory is.
TESTDIR=$(mktemp -d "${FSGATE_TEST_TMPDIR:-/var/tmp}/fsgate-run-test.XXXXXX")
chmod 0777 "$TESTDIR"
WORK="$TESTDIR/work"
mkdir -m 0777 "$WORK"
cd "$WORK"

# A marker unique to this test process, for "no survivors" checks.
MARK=$((900000 + $$))

survivors () { pgrep -f "sleep $MARK" || true; }

# run_fsg ARGS...: fsgate-run with a hard deadline so a bug cannot hang the suite.
# --quiet: the denial summary on stderr would mix with the command's own
# messages that tests compare (test-run-cli checks the summary itself).
run_fsg () { timeout -k 5 60 "$FSGATE_RUN" --quiet "$@"; }

# wait_for FILE [SECONDS]: wait until FILE exists (a ready marker the command
# writes), at most SECONDS (default 30, generous for a loaded machine).
# Never a fixed sleep: the test goes on as soon as the command is ready.
wait_for () {
  local i
  for i in $(seq $(( ${2:-30} * 50 ))); do
    [ -e "$1" ] && return 0
    sleep 0.02
  done
  echo "# timed out waiting for $1"
  return 1
}

# wait_until CMD...: wait until CMD succeeds (a condition the other side
# makes true), at most 30 s.
wait_until () {
  local i
  for i in $(seq 1500); do
    "$@" && return 0
    sleep 0.02
  done
  echo "# timed out waiting for: $*"
  return 1
}

# Values from a JSON file: json_get FILE PYTHON-EXPR (the object is `r`).
json_get () { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# Mounts fsgate-run makes live only in the sandbox's mount namespace; any of
# them showing up on the host is a leak.
fsg_mounts () { grep -cE ' - fuse fsgate | fsgate-(dev|tmp|shm|scratch) ' /proc/self/mountinfo || true; }

require_fsgate () {
  if ! "$FSGATE_RUN" --doctor >/dev/null 2>&1; then
    if [ -n "${FSGATE_TESTS_MUST_RUN:-}" ]; then
      echo "Bail out! fsgate-run --doctor fails and FSGATE_TESTS_MUST_RUN is set"
      "$FSGATE_RUN" --doctor | sed 's/^/# /'
      exit 1
    fi
    echo "1..0 # SKIP fsgate-run cannot run here ($("$FSGATE_RUN" --doctor | grep FAIL | head -1))"
    exit 0
  fi
}
