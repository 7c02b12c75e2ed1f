#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench-run.sh: fsgate-run against bwrap and no sandbox on the workloads of
# issue 15, with the hybrid view on (the default) and off (FSGATE_HYBRID=0),
# all in one run and interleaved, so that the ratios hold on a loaded
# machine:
#
#   start       `-- true`, median of --start-runs (21)
#   untar       /usr/include (as a tar made once) into the workspace
#   gcc         20 x `gcc -c -O1` of files including system headers
#   both        untar + gcc in one sandbox
#   find        `find /usr -type f | wc -l`
#   csu         create (O_EXCL) + stat + unlink of 2,000 files in the workspace
#   gitstatus   `git status --porcelain` on a committed 50,000-file checkout
#   zlib        zlib's ./configure, make -j2 and make test (the source from
#               Debian's mirror, cached; --zlib FILE gives a tarball)
#
# bwrap runs as the issue measured it: --unshare-all --ro-bind / / --tmpfs
# /tmp --bind WS WS --dev /dev --proc /proc. fsgate-run runs the default
# profile with --rw WS -C WS. The ratio columns divide by bwrap, and for
# zlib by native (its target). The requests each workload sends per file
# are in docs/performance.md (FSGATE_RUN_DEBUG=1 counts them).
#
# Usage: bench-run.sh [--runs N] [--start-runs N] [--dir DIR] [--only W,W]
#                     [--zlib FILE] [--old BUILDDIR]
#   --runs N         repetitions of each workload, median reported (3)
#   --start-runs N   repetitions of the startup (21)
#   --dir DIR        where the workspace is made (/var/tmp; not below /tmp,
#                    which fsgate-run and bwrap replace)
#   --only LIST      only these workloads (names above, comma-separated)
#   --zlib FILE      zlib source tarball (else fetched once into
#                    /var/tmp/fsgate-bench-cache; skipped when unavailable)
#   --old BUILDDIR   another build (e.g. of the commit before a change):
#                    its fsgate-run joins the startup rounds, interleaved
#                    with the others, and a line after the table gives it
# Needs bwrap, gcc, make, tar, git and root (or user namespaces); removes
# everything it made on exit. Registered as a meson benchmark:
#   meson test -C _build --benchmark --suite bench bench-run -v
set -u

RUNS=3
START_RUNS=21
DIR=/var/tmp
ONLY=
ZLIB=
OLD=
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --start-runs) START_RUNS=$2; shift 2 ;;
    --dir) DIR=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --zlib) ZLIB=$2; shift 2 ;;
    --old) OLD=$2; shift 2 ;;
    -h|--help) sed -n '3,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-run: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

BUILDDIR=${FSGATE_BUILDDIR:-$(dirname "$0")/../..}
FSGATE_RUN=${FSGATE_RUN:-$BUILDDIR/runner/fsgate-run}
die () { echo "bench-run: $*" >&2; exit 1; }
[ -x "$FSGATE_RUN" ] || die "$FSGATE_RUN does not exist (build first)"
[ -z "$OLD" ] || [ -x "$OLD/runner/fsgate-run" ] || die "--old $OLD: no runner/fsgate-run there"
for t in bwrap gcc make tar git python3; do command -v $t >/dev/null || die "$t is not installed"; done
wanted () { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }

TOP=$(mktemp -d "$DIR/fsgate-bench-run.XXXXXX") || die "mktemp in $DIR"
trap 'rm -rf "$TOP"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
WS=$TOP/ws
mkdir "$WS"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.org GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.org

tar -C /usr -cf "$TOP/include.tar" include 2>/dev/null || die "tar of /usr/include"
mkdir "$TOP/src"
for i in $(seq 1 20); do
  printf '#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <math.h>\n#include <errno.h>\n#include <unistd.h>\n#include <sys/stat.h>\n#include <pthread.h>\nint f%d (int x) { char b[64]; snprintf (b, sizeof b, "%%d", x); return (int) strlen (b) + (int) sqrt (x) + errno; }\n' "$i" > "$TOP/src/f$i.c"
done
N_FILES=$(tar -tf "$TOP/include.tar" | wc -l)

# The git checkout: 50,000 files in directories of 100, committed once.
GIT_FILES=50000
if wanted gitstatus; then
  git init -q "$WS/repo"
  python3 "$(dirname "$0")/make-checkout.py" "$WS/repo" "$GIT_FILES"
  git -C "$WS/repo" add -A && git -C "$WS/repo" commit -qm files || die "git commit of the checkout"
fi

# zlib: a real autoconf-style build with its test suite.
ZLIB_URL=http://deb.debian.org/debian/pool/main/z/zlib/zlib_1.2.13.dfsg.orig.tar.bz2
if wanted zlib; then
  if [ -z "$ZLIB" ]; then
    ZLIB=/var/tmp/fsgate-bench-cache/$(basename "$ZLIB_URL")
    if [ ! -s "$ZLIB" ]; then
      mkdir -p "$(dirname "$ZLIB")"
      curl -sf --max-time 60 -o "$ZLIB.part" "$ZLIB_URL" && mv "$ZLIB.part" "$ZLIB" || rm -f "$ZLIB.part"
    fi
  fi
  if [ -s "$ZLIB" ]; then
    # owned by us: every target may then remove and rewrite the copy
    mkdir "$TOP/zlib" && tar --no-same-owner -C "$TOP/zlib" -xf "$ZLIB" || die "cannot unpack $ZLIB"
    ZLIB_SRC=$(find "$TOP/zlib" -mindepth 1 -maxdepth 1 -type d | head -1)
  else
    echo "# zlib: no source ($ZLIB_URL unreachable; give --zlib FILE): skipped" >&2
    ONLY=${ONLY:-start,untar,gcc,both,find,csu,gitstatus}
    ONLY=${ONLY//zlib/}
  fi
fi

UNTAR="rm -rf $WS/include && tar -C $WS -xf $TOP/include.tar"
GCC="rm -rf $WS/obj && mkdir $WS/obj && cd $WS/obj && for f in $TOP/src/*.c; do gcc -c -O1 \$f || exit 1; done"
FIND="find /usr -type f 2>/dev/null | wc -l > /dev/null"
CSU="cd $WS && python3 -c 'import os
os.makedirs(\"csu\", exist_ok=True)
for i in range(2000):
    p = \"csu/f%d\" % i
    os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)); os.stat(p); os.unlink(p)
os.rmdir(\"csu\")'"
GITSTATUS="cd $WS/repo && git status --porcelain | wc -l > /dev/null"
ZLIBBUILD="rm -rf $WS/zlib && cp -a ${ZLIB_SRC:-/nonexistent} $WS/zlib && cd $WS/zlib && ./configure > /dev/null && make -j2 > /dev/null 2>&1 && make test > /dev/null 2>&1"
declare -A CMD=([untar]="$UNTAR" [gcc]="$GCC" [both]="$UNTAR && $GCC" [find]="$FIND" [csu]="$CSU"
                [gitstatus]="$GITSTATUS" [zlib]="$ZLIBBUILD")

BW=(bwrap --unshare-all --ro-bind / / --tmpfs /tmp --bind "$WS" "$WS" --dev /dev --proc /proc
    --die-with-parent --chdir "$WS")
FR=("$FSGATE_RUN" --quiet --rw "$WS" -C "$WS")

now_ns () { date +%s%N; }
declare -A T=() FAILED=()
run_one () { # TARGET WORKLOAD -> appends nanoseconds
  local tgt=$1 w=$2 t cmd
  cmd=${CMD[$w]}
  t=$(now_ns)
  case $tgt in
    native) bash -c "$cmd" ;;
    bwrap) "${BW[@]}" bash -c "$cmd" ;;
    off) FSGATE_HYBRID=0 "${FR[@]}" -- bash -c "$cmd" ;;
    hybrid) FSGATE_HYBRID=1 "${FR[@]}" -- bash -c "$cmd" ;;
  esac || { echo "bench-run: $w failed under $tgt" >&2; FAILED[$w|$tgt]=1; }
  T[$w|$tgt]+="$(( $(now_ns) - t )) "
}
median () { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
med () { echo "${T[$1|$2]}" | median; }
fmt () { awk -v n="$1" 'BEGIN { s = n / 1e9; if (s < 0.1) printf "%.1f ms", s * 1000; else printf "%.2f s", s }'; }
cell () { if [ -n "${FAILED[$1|$2]:-}" ]; then echo "fails"; else fmt "$(med "$1" "$2")"; fi; }
ratio () { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# the checkout and the sources just written: on disk before anything is timed
sync
TARGETS=(native bwrap off hybrid)
WORKLOADS=()
for w in start untar gcc both find csu gitstatus zlib; do wanted $w && WORKLOADS+=("$w"); done
"${FR[@]}" -- true || die "fsgate-run -- true fails here (fsgate-run --doctor)"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, $(uname -r)"
echo "# $(FSGATE_HYBRID=1 "${FR[@]}" -v -- true 2>&1 >/dev/null | grep -o 'hybrid view: [0-9]* host director[a-z]* bound read-only ([^)]*)' | head -1)"
# Startup: `true` itself, each target spawned directly (posix_spawn, no
# shell and no date(1) between: both would cost more than the sandbox),
# interleaved; output to /dev/null.
start_times () {
  python3 - "$START_RUNS" "${BW[*]}" "${FR[*]}" "${OLD:+$OLD/runner/fsgate-run}" <<'PY'
import os, sys, time
n, bw, fr, old = int(sys.argv[1]), sys.argv[2].split(), sys.argv[3].split(), sys.argv[4]
cmds = {"native": (["true"], {}), "bwrap": (bw + ["true"], {}),
        "off": (fr + ["--", "true"], {"FSGATE_HYBRID": "0"}),
        "hybrid": (fr + ["--", "true"], {"FSGATE_HYBRID": "1"})}
if old:
    cmds["old"] = ([old] + fr[1:] + ["--", "true"], {})
null = os.open("/dev/null", os.O_RDWR)
fa = [(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
res = {k: [] for k in cmds}
for _ in range(n):
    for k, (c, extra) in cmds.items():
        env = dict(os.environ, **extra)
        t = time.perf_counter_ns()
        pid = os.posix_spawnp(c[0], c, env, file_actions=fa)
        _, st = os.waitpid(pid, 0)
        if st != 0:
            sys.exit("startup failed under %s" % k)
        res[k].append(time.perf_counter_ns() - t)
for k, v in res.items():
    print(k, " ".join(map(str, v)))
PY
}
for w in "${WORKLOADS[@]}"; do
  if [ "$w" = start ]; then
    while read -r tgt times; do T[start|$tgt]="$times"; done < <(start_times) || die "startup failed"
    continue
  fi
  # one warm-up of the host's caches, then interleaved runs
  bash -c "${CMD[$w]}" > /dev/null 2>&1
  for _ in $(seq "$RUNS"); do
    for tgt in "${TARGETS[@]}"; do run_one "$tgt" "$w"; done
  done
done
rm -rf "$WS/include" "$WS/obj" "$WS/zlib"

echo
echo "| workload | native | bwrap | fsgate-run, hybrid off | fsgate-run | off/bwrap | fsgate-run/bwrap | fsgate-run/native |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
label () {
  case $1 in
    start) echo "startup \`-- true\` (median of $START_RUNS)" ;;
    untar) echo "untar /usr/include ($N_FILES entries) into the workspace" ;;
    gcc) echo "20 x \`gcc -c -O1\` (system headers)" ;;
    both) echo "untar + 20 gcc together" ;;
    find) echo "\`find /usr -type f\`" ;;
    csu) echo "create+stat+unlink, 2,000 files" ;;
    gitstatus) echo "\`git status\`, $GIT_FILES files" ;;
    zlib) echo "zlib configure + make -j2 + make test" ;;
  esac
}
for w in "${WORKLOADS[@]}"; do
  n=$(med "$w" native); b=$(med "$w" bwrap); o=$(med "$w" off); h=$(med "$w" hybrid)
  echo "| $(label $w) | $(cell "$w" native) | $(cell "$w" bwrap) | $(cell "$w" off) | $(cell "$w" hybrid) | $(ratio "$o" "$b") | $(ratio "$h" "$b") | $(ratio "$h" "$n") |"
done
if [ -n "$OLD" ] && wanted start; then
  echo
  echo "startup, in the same rounds: $OLD $(fmt "$(med start old)") ($(ratio "$(med start old)" "$(med start bwrap)")x bwrap), this build $(fmt "$(med start hybrid)") ($(ratio "$(med start hybrid)" "$(med start bwrap)")x bwrap)"
fi
