#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench-git.sh: `git status` on a 50,000-file checkout, natively and through
# fsgate-run with git protection (git = protect, the default) and without
# (git = off); the median of N runs each, and the ratio protect/off (issue
# 11: at most 1.5). Not part of the default test run:
#   meson test --benchmark --suite bench bench-git -v
#
# Usage: bench-git.sh [--runs N] [--files N] [--dir DIR] [FSGATE_RUN]
# Everything it makes is removed on exit.

set -eu -o pipefail

RUNS=5
FILES=50000
BASE_PARENT=${TMPDIR_BENCH:-/var/tmp}
FSGATE_RUN=${FSGATE_BUILDDIR:+$FSGATE_BUILDDIR/runner/fsgate-run}
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --files) FILES=$2; shift 2 ;;
    --dir) BASE_PARENT=$2; shift 2 ;;
    -*) echo "bench-git.sh: unknown option $1" >&2; exit 2 ;;
    *) FSGATE_RUN=$1; shift ;;
  esac
done
FSGATE_RUN=$(realpath "${FSGATE_RUN:-/nonexistent}" 2>/dev/null || true)
[ -x "${FSGATE_RUN:-}" ] || { echo "bench-git.sh: no fsgate-run (give its path)" >&2; exit 2; }
command -v git >/dev/null || { echo "bench-git.sh: git is not installed" >&2; exit 77; }

BASE=$(mktemp -d "$BASE_PARENT/fsgate-bench-git.XXXXXX")
trap 'rm -rf "$BASE"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.org GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.org

# The checkout: FILES files in directories of 100, a few denied names
# (.env) as a real project has, committed.
REPO="$BASE/repo"
git init -q "$REPO"
python3 "$(dirname "$0")/make-checkout.py" "$REPO" "$FILES"
echo .env > "$REPO/.gitignore"
echo SECRET > "$REPO/.env"
git -C "$REPO" add -A
git -C "$REPO" commit -qm files
printf '[filesystem]\ngit = off\n' > "$BASE/off.ini"
# the sandboxed git gets the same environment
STATUS='export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null; git status --porcelain | wc -l'

median () { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# time_runs CMD...: the median wall time in ms of RUNS runs after one warm-up
time_runs () {
  "$@" >/dev/null
  for _ in $(seq "$RUNS"); do
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000000 ))
  done | median
}

cd "$REPO"
native=$(time_runs sh -c "$STATUS")
protect=$(time_runs "$FSGATE_RUN" -- sh -c "$STATUS")
off=$(time_runs "$FSGATE_RUN" --policy "$BASE/off.ini" -- sh -c "$STATUS")
same=$("$FSGATE_RUN" -- sh -c "$STATUS")
echo "git status, $FILES files, median of $RUNS (ms): native $native, fsgate-run git=off $off, git=protect $protect"
echo "changes seen through fsgate-run: $same (0 expected)"
awk -v p="$protect" -v o="$off" -v n="$native" 'BEGIN {
  printf "ratio git=protect / git=off: %.2f (target <= 1.5); fsgate-run git=protect / native: %.2f\n", p / o, p / n
  exit (p / o <= 1.5) ? 0 : 1 }'
