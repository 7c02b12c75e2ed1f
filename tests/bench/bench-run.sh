#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench-run.sh: fsgate-run against bwrap and no sandbox on the workloads of
# issue 15, with the hybrid view on (the default) and off (FSGATE_HYBRID=0),
# all in one run and interleaved, so that the ratios hold on a loaded machine.
#
#   startup          `-- true`, median of --start-runs (15)
#   untar            /usr/include (as a tar made once) into the workspace
#   gcc              20 x `gcc -c -O1` of files including system headers
#   untar+gcc        both in one sandbox
#   find /usr        `find /usr -type f | wc -l`
#
# bwrap runs as the issue measured it: --unshare-all --ro-bind / / --tmpfs
# /tmp --bind WS WS --dev /dev --proc /proc. fsgate-run runs the default
# profile with --rw WS -C WS. Not measured here: a zlib build (no source
# offline) and git status on 50,000 files (see bench-fs.sh for the
# daemon's own per-request numbers).
#
# Usage: bench-run.sh [--runs N] [--start-runs N] [--dir DIR]
#   --runs N         repetitions of each workload, median reported (3)
#   --start-runs N   repetitions of the startup (15)
#   --dir DIR        where the workspace is made (/var/tmp; not below /tmp,
#                    which fsgate-run and bwrap replace)
# Needs bwrap, gcc, tar and root (or user namespaces); removes everything it
# made on exit. Registered as a meson benchmark:
#   meson test -C _build --benchmark --suite bench bench-run -v
set -u

RUNS=3
START_RUNS=15
DIR=/var/tmp
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --start-runs) START_RUNS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    -h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-run: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

BUILDDIR=${FSGATE_BUILDDIR:-$(dirname "$0")/../../_build}
FSGATE_RUN=${FSGATE_RUN:-$BUILDDIR/runner/fsgate-run}
die () { echo "bench-run: $*" >&2; exit 1; }
[ -x "$FSGATE_RUN" ] || die "$FSGATE_RUN does not exist (build first)"
for t in bwrap gcc tar; do command -v $t >/dev/null || die "$t is not installed"; done

TOP=$(mktemp -d "$DIR/fsgate-bench-run.XXXXXX") || die "mktemp in $DIR"
trap 'rm -rf "$TOP"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
WS=$TOP/ws
mkdir "$WS"
tar -C /usr -cf "$TOP/include.tar" include 2>/dev/null || die "tar of /usr/include"
mkdir "$TOP/src"
for i in $(seq 1 20); do
  printf '#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <math.h>\n#include <errno.h>\n#include <unistd.h>\n#include <sys/stat.h>\n#include <pthread.h>\nint f%d (int x) { char b[64]; snprintf (b, sizeof b, "%%d", x); return (int) strlen (b) + (int) sqrt (x) + errno; }\n' "$i" > "$TOP/src/f$i.c"
done
N_FILES=$(tar -tf "$TOP/include.tar" | wc -l)

UNTAR="rm -rf $WS/include && tar -C $WS -xf $TOP/include.tar"
GCC="rm -rf $WS/obj && mkdir $WS/obj && cd $WS/obj && for f in $TOP/src/*.c; do gcc -c -O1 \$f || exit 1; done"
FIND="find /usr -type f | wc -l > /dev/null"
declare -A CMD=([untar]="$UNTAR" [gcc]="$GCC" [both]="$UNTAR && $GCC" [find]="$FIND")

BW=(bwrap --unshare-all --ro-bind / / --tmpfs /tmp --bind "$WS" "$WS" --dev /dev --proc /proc
    --die-with-parent --chdir "$WS")
FR=("$FSGATE_RUN" --rw "$WS" -C "$WS")

now_ns () { date +%s%N; }
declare -A T=()
run_one () { # TARGET WORKLOAD -> appends seconds
  local tgt=$1 w=$2 t cmd
  if [ "$w" = start ]; then cmd=true; else cmd=${CMD[$w]}; fi
  t=$(now_ns)
  case $tgt in
    native) bash -c "$cmd" ;;
    bwrap) "${BW[@]}" bash -c "$cmd" ;;
    off) FSGATE_HYBRID=0 "${FR[@]}" -- bash -c "$cmd" ;;
    hybrid) FSGATE_HYBRID=1 "${FR[@]}" -- bash -c "$cmd" ;;
  esac || die "$w failed under $tgt"
  T[$w|$tgt]+="$(( $(now_ns) - t )) "
}
run_start () { # TARGET: `true` itself, not through bash
  local tgt=$1 t
  t=$(now_ns)
  case $tgt in
    native) true ;;
    bwrap) "${BW[@]}" true ;;
    off) FSGATE_HYBRID=0 "${FR[@]}" -- true ;;
    hybrid) FSGATE_HYBRID=1 "${FR[@]}" -- true ;;
  esac || die "startup failed under $tgt"
  T[start|$tgt]+="$(( $(now_ns) - t )) "
}
median () { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
med () { echo "${T[$1|$2]}" | median; }
fmt () { awk -v n="$1" 'BEGIN { s = n / 1e9; if (s < 0.1) printf "%.1f ms", s * 1000; else printf "%.2f s", s }'; }
ratio () { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

TARGETS=(native bwrap off hybrid)
"${FR[@]}" -- true || die "fsgate-run -- true fails here (fsgate-run --doctor)"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
echo "# $(FSGATE_HYBRID=1 "${FR[@]}" -v -- true 2>&1 >/dev/null | grep -o 'hybrid view: [0-9]* host director[a-z]* bound' | head -1)"
for _ in $(seq "$START_RUNS"); do
  for tgt in "${TARGETS[@]}"; do run_start "$tgt"; done
done
for w in untar gcc both find; do
  # one warm-up of the host's caches, then interleaved runs
  bash -c "${CMD[$w]}" > /dev/null 2>&1
  for _ in $(seq "$RUNS"); do
    for tgt in "${TARGETS[@]}"; do run_one "$tgt" "$w"; done
  done
done
rm -rf "$WS/include" "$WS/obj"

echo
echo "| workload | native | bwrap | fsgate-run, hybrid off | fsgate-run (hybrid) | off/bwrap | hybrid/bwrap |"
echo "|---|---:|---:|---:|---:|---:|---:|"
label () {
  case $1 in
    start) echo "startup \`-- true\` (median of $START_RUNS)" ;;
    untar) echo "untar /usr/include ($N_FILES entries) into the workspace" ;;
    gcc) echo "20 x \`gcc -c -O1\` (system headers)" ;;
    both) echo "untar + 20 gcc together" ;;
    find) echo "\`find /usr -type f\`" ;;
  esac
}
for w in start untar gcc both find; do
  n=$(med "$w" native); b=$(med "$w" bwrap); o=$(med "$w" off); h=$(med "$w" hybrid)
  echo "| $(label $w) | $(fmt "$n") | $(fmt "$b") | $(fmt "$o") | $(fmt "$h") | $(ratio "$o" "$b") | $(ratio "$h" "$b") |"
done
