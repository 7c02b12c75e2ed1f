#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench-run-csu.sh: create+stat+unlink under fsgate-run, where the view is
# mounted without default_permissions (docs/security.md, "Permissions").
# Per file: the FUSE requests (libfuse's debug log of the daemon,
# FSGATE_RUN_DEBUG=1, the difference between N and 2N files, so startup
# does not count) and the time of the loop, alternating targets, median and
# best of --runs:
#   native     the directory itself
#   ll         libfuse's passthrough_ll (built now from libfuse3-dev)
#   root       fsgate-run as root (kernel passthrough, no writeback cache)
#   user       fsgate-run as an unprivileged uid (writeback cache)
# With --old DIR (a build directory of another fsgate version), its
# fsgate-run is measured too ("old-root", "old-user"), for a before/after
# ratio in one run.
#
# Usage: bench-run-csu.sh [--runs N] [--files N] [--old BUILDDIR] [BUILDDIR]
# Needs root and /dev/fuse. Everything is removed on exit.

set -eu -o pipefail

RUNS=7
FILES=2000
OLD=
while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --files) FILES=$2; shift 2 ;;
    --old) OLD=$2; shift 2 ;;
    *) break ;;
  esac
done
BUILD=${1:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}}
BUILD=$(cd "$BUILD" && pwd)
[ -n "$OLD" ] && OLD=$(cd "$OLD" && pwd)
U=23456
LL_SRC=${LL_SRC:-/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c}

die () { echo "bench-run-csu: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$BUILD/runner/fsgate-run" ] || die "no $BUILD/runner/fsgate-run"
[ -r "$LL_SRC" ] || die "no $LL_SRC (install libfuse3-dev)"

W=$(mktemp -d /var/tmp/fsgate-bench-csu.XXXXXX)
LL_PID=
cleanup () {
  if grep -q " $W/llmnt " /proc/self/mountinfo; then umount "$W/llmnt" || umount -l "$W/llmnt"; fi
  [ -n "$LL_PID" ] && wait "$LL_PID" 2>/dev/null
  grep -q " $W" /proc/self/mountinfo && grep " $W" /proc/self/mountinfo | awk '{print $5}' | sort -r | xargs -r -n1 umount -l
  rm -rf "$W"
}
trap cleanup EXIT
chmod 0755 "$W"

cat > "$W/csu.sh" <<'EOF'
#!/bin/sh
python3 - "$1" <<'PY'
import os, sys, time
n = int(sys.argv[1])
os.makedirs('csu', exist_ok=True)
t = time.perf_counter()
for i in range(n):
    p = 'csu/f%d' % i
    os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    os.stat(p)
    os.unlink(p)
print('%.4f' % (time.perf_counter() - t))
PY
rmdir csu
EOF
chmod 0755 "$W/csu.sh"
for d in native ws u lldata llmnt; do mkdir "$W/$d"; done
chown $U:$U "$W/u"
for d in native ws u lldata; do cp "$W/csu.sh" "$W/$d/"; done

gcc -O2 -w $(pkg-config --cflags fuse3) "$LL_SRC" -o "$W/pll" $(pkg-config --libs fuse3)
"$W/pll" -f -o source="$W/lldata" "$W/llmnt" 2>/dev/null &
LL_PID=$!
for _ in $(seq 100); do grep -q " $W/llmnt " /proc/self/mountinfo && break; sleep 0.05; done

# uid U on a /dev/fuse it may open (a private node where the host's is root-only)
unpriv () {
  local wrap=""
  if [ "$(stat -c %a /dev/fuse)" != 666 ]; then
    wrap="mkdir -p $W/devfuse && mount -t tmpfs fsgate-bench $W/devfuse &&
      mknod -m 666 $W/devfuse/fuse c 10 229 && mount --bind $W/devfuse/fuse /dev/fuse &&"
  fi
  unshare -m --propagation private sh -c "$wrap exec setpriv --reuid=$U --regid=$U --clear-groups \"\$@\"" sh "$@"
}
# run TARGET N [env...]: the loop's time (stdout) for TARGET
run () {
  local t=$1 n=$2 b=$BUILD
  case $t in old-*) b=$OLD ;; esac
  case $t in
    native) (cd "$W/native" && ./csu.sh "$n") ;;
    ll) (cd "$W/llmnt" && ./csu.sh "$n") ;;
    root|old-root) (cd "$W/ws" && env "${@:3}" "$b/runner/fsgate-run" -- ./csu.sh "$n") ;;
    user|old-user) (cd "$W/u" && unpriv env HOME="$W/u" "${@:3}" "$b/runner/fsgate-run" -- ./csu.sh "$n") ;;
  esac
}
TARGETS=(native ll root user)
[ -n "$OLD" ] && TARGETS+=(old-root old-user)

echo "create+stat+unlink, FUSE requests per file (difference of $FILES and $((2 * FILES)) files):"
for t in root user ${OLD:+old-root old-user}; do
  for n in $FILES $((2 * FILES)); do
    run $t $n FSGATE_RUN_DEBUG=1 2> "$W/debug-$n.log" > /dev/null
    grep -a -o 'opcode: [A-Z_]*' "$W/debug-$n.log" | awk '{ c[$2]++ } END { for (k in c) print k, c[k] }' | sort > "$W/count-$n.txt"
  done
  printf '  %-9s' "$t"
  join -a1 -a2 -e0 -o 0,1.2,2.2 "$W/count-$FILES.txt" "$W/count-$((2 * FILES)).txt" |
    awk -v n="$FILES" '{ d = ($3 - $2) / n; if (d >= 0.05) { printf " %s %.2f", $1, d; if ($1 != "FORGET" && $1 != "BATCH_FORGET") s += d } }
                       END { printf "  (synchronous: %.2f)\n", s }'
done

echo
echo "create+stat+unlink of $FILES files, seconds (alternating targets, $RUNS runs):"
for r in $(seq "$RUNS"); do
  for t in "${TARGETS[@]}"; do
    echo "$t $(run $t "$FILES" 2>/dev/null)"
  done
done > "$W/times.txt"
python3 - "$W/times.txt" "${TARGETS[@]}" <<'PY'
import statistics, sys
d = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 2:
        d.setdefault(p[0], []).append(float(p[1]))
med = {k: statistics.median(v) for k, v in d.items()}
best = {k: min(v) for k, v in d.items()}
for t in sys.argv[2:]:
    if t not in d:
        print('  %-9s no result' % t)
        continue
    print('  %-9s median %.3f best %.3f   x native %.2f (best %.2f)   x ll %.2f (best %.2f)' % (
        t, med[t], best[t], med[t] / med['native'], best[t] / best['native'],
        med[t] / med['ll'], best[t] / best['ll']))
    print('            runs: ' + ' '.join('%.3f' % x for x in d[t]))
for t in ('root', 'user'):
    if 'old-' + t in med:
        print('  %s new/old: median %.2f, best %.2f' % (
            t, med[t] / med['old-' + t], best[t] / best['old-' + t]))
PY
