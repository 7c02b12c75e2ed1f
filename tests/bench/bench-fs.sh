#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench-fs.sh: the same file-system work, in one run, on
#   native          the host directory itself
#   passthrough_ll  libfuse's own low-level example, built now from the
#                   source Debian ships in libfuse3-dev (no copy is kept)
#   passthrough_ll -o default_permissions  (column "ll+dp")
#                   the same with the kernel's permission checks, which
#                   fsgate needs and plain passthrough_ll does not do
#   fsgate          `fsgate mount` enforcing a 50-rule policy whose rules do
#                   not match the workload (roots + deny-read/deny-write globs)
#   bwrap           (with --bwrap) the workload inside `bwrap --bind DIR DIR`
# and, when $FSGATE_BUILDDIR/runner/fsgate-run exists, `fsgate-run -- true`
# startup and a small build (untar + gcc) against bwrap and no sandbox.
#
# Usage: bench-fs.sh [OPTIONS] [FSGATE [FSGATE_RUN]]
#   --runs N        repetitions per workload, the median is reported (3)
#   --size-mib N    size of the sequential file (1024)
#   --dir DIR       where the temporary tree is made (/var/tmp); all targets
#                   use the same directory on the same file system
#   --bwrap         add a bwrap column (bwrap --bind DIR DIR running the work)
#   --no-runner     skip the fsgate-run startup/build comparison
#   --no-fio        use the python3 random-read tool even if fio is installed
#   --count         also count FUSE requests per workload (passthrough_ll's
#                   -d log; fsgate's --stats, with the daemon's CPU time per
#                   operation; slower, not timed)
#   --count-only    only the --count pass (no timed runs, no fsgate-run)
#   --quick         --runs 1 --size-mib 256 (a smoke test of the script)
# Run as root for cold-cache numbers (echo 3 > /proc/sys/vm/drop_caches);
# otherwise "cold" is reported as not dropped. Registered as a meson
# benchmark: `meson test --benchmark --suite bench bench-fs -v`.
#
# Everything (mounts, daemons, the temporary tree) is removed on exit, also
# when a step fails or the script is interrupted.

set -eu -o pipefail
shopt -s inherit_errexit

RUNS=3
SIZE_MIB=1024
BASE_PARENT=${TMPDIR_BENCH:-/var/tmp}
WITH_BWRAP=0
WITH_RUNNER=1
USE_FIO=1
COUNT=0
COUNT_ONLY=0
FSGATE=
FSGATE_RUN=

while [ $# -gt 0 ]; do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --size-mib) SIZE_MIB=$2; shift 2 ;;
    --dir) BASE_PARENT=$2; shift 2 ;;
    --bwrap) WITH_BWRAP=1; shift ;;
    --no-runner) WITH_RUNNER=0; shift ;;
    --no-fio) USE_FIO=0; shift ;;
    --count) COUNT=1; shift ;;
    --count-only) COUNT=1; COUNT_ONLY=1; WITH_RUNNER=0; shift ;;
    --quick) RUNS=1; SIZE_MIB=256; shift ;;
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "bench-fs: unknown option $1" >&2; exit 2 ;;
    *) if [ -z "$FSGATE" ]; then FSGATE=$1; else FSGATE_RUN=$1; fi; shift ;;
  esac
done

BUILDDIR=${FSGATE_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
FSGATE=${FSGATE:-$BUILDDIR/fsgate/fsgate}
FSGATE_RUN=${FSGATE_RUN:-$BUILDDIR/runner/fsgate-run}
LL_SRC=${LL_SRC:-/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c}

die () { echo "bench-fs: $*" >&2; exit 1; }
note () { echo "# $*" >&2; }

[ -x "$FSGATE" ] || die "no fsgate binary at $FSGATE (pass its path as the first argument)"
[ -e /dev/fuse ] || die "/dev/fuse is missing"
[ -r "$LL_SRC" ] || die "no $LL_SRC (install libfuse3-dev)"
command -v gcc >/dev/null || die "gcc is needed to build passthrough_ll"
command -v pkg-config >/dev/null || die "pkg-config is needed"
PY=$(command -v /usr/bin/python3 || command -v python3) || die "python3 is needed"
if [ $WITH_BWRAP = 1 ]; then command -v bwrap >/dev/null || die "--bwrap: bwrap is not installed"; fi
if [ $USE_FIO = 1 ] && ! command -v fio >/dev/null; then USE_FIO=0; fi

# Same fd budget for every daemon (fsgate raises its soft limit itself).
ulimit -Sn "$(ulimit -Hn)" 2>/dev/null || true

# ---- Cleanup ---------------------------------------------------------------

BASE=
PIDS=()
MOUNTS=()

cleanup () {
  local rc=$? m p
  trap - EXIT INT TERM HUP
  set +e
  for m in "${MOUNTS[@]}"; do
    if mountpoint -q "$m" 2>/dev/null; then
      umount "$m" 2>/dev/null || fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    fi
  done
  for p in "${PIDS[@]}"; do
    kill "$p" 2>/dev/null
  done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  for m in "${MOUNTS[@]}"; do
    mountpoint -q "$m" 2>/dev/null && umount -l "$m" 2>/dev/null
  done
  if [ -n "$BASE" ] && [ -d "$BASE" ]; then
    rm -rf --one-file-system "$BASE"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

BASE=$(mktemp -d "$BASE_PARENT/fsgate-bench.XXXXXX")
chmod 755 "$BASE"
DATA=$BASE/data          # the host directory all targets work on
GEN=$BASE/gen            # inputs made once (tarballs, tools)
MNT_LL=$BASE/mnt-ll
MNT_LLDP=$BASE/mnt-lldp
MNT_FSG=$BASE/mnt-fsg
mkdir -p "$DATA" "$GEN" "$MNT_LL" "$MNT_LLDP" "$MNT_FSG"

# ---- Helpers -----------------------------------------------------------------

CAN_DROP=0
if [ -w /proc/sys/vm/drop_caches ]; then CAN_DROP=1; fi
drop_caches () {
  sync
  if [ $CAN_DROP = 1 ]; then echo 3 > /proc/sys/vm/drop_caches; fi
}

now_ns () { date +%s%N; }
# elapsed START_NS -> seconds
elapsed () { echo "$(( $(now_ns) - $1 ))" | awk '{ printf "%.6f\n", $1 / 1e9 }'; }

median () { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

wait_mount () {
  local m=$1 pid=$2
  for _ in $(seq 100); do
    if mountpoint -q "$m"; then return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# ---- Inputs ------------------------------------------------------------------

note "preparing inputs in $BASE"
dd if=/dev/urandom of="$DATA/big.bin" bs=1M count="$SIZE_MIB" status=none
mkdir -p "$DATA/src"
cp -a /usr/include/. "$DATA/src/"
# 20,000 small files, unless passthrough_ll cannot hold them: it keeps one
# O_PATH fd per inode the kernel caches, and every extracted file stays
# cached, so for it the tree must fit in RLIMIT_NOFILE (hard). fsgate has an
# fd budget and handles any size (tests/fs/test-fs-scale.sh: 100,000 files
# with 1024 fds); the tree is shrunk only so that both columns compare.
N_WANT=20000
FD_HARD=$(ulimit -Hn)
if [ "$FD_HARD" != unlimited ] && [ $(( N_WANT + 2500 )) -gt "$FD_HARD" ]; then
  N_WANT=$(( (FD_HARD - 2500) / 200 * 200 ))
  FD_NOTE="reduced from 20,000 to $N_WANT files: RLIMIT_NOFILE hard limit is $FD_HARD and passthrough_ll holds one fd per cached inode (20,000 fails with EMFILE in tar on it; fsgate has an fd budget)"
  note "small-file tree $FD_NOTE"
fi
# mktree DIR NDIRS SEED: NDIRS directories of 200 files of 64-4096 random bytes.
cat > "$GEN/mktree.py" <<'EOF'
import os, random, sys
root = sys.argv[1]
rnd = random.Random(int(sys.argv[3]))
for d in range(int(sys.argv[2])):
    dd = os.path.join(root, "d%03d" % d)
    os.makedirs(dd)
    for f in range(200):
        with open(os.path.join(dd, "f%03d.txt" % f), "wb") as fp:
            fp.write(rnd.randbytes(rnd.randint(64, 4096)))
EOF
"$PY" "$GEN/mktree.py" "$GEN/tree" "$(( N_WANT / 200 ))" 42
tar -C "$GEN/tree" -cf "$GEN/small.tar" .
rm -rf "$GEN/tree"
# When the tree was reduced, a 20,000-file tree too, for one more untar on
# every target: passthrough_ll is expected to fail it (reported, not hidden).
if [ "$N_WANT" -lt 20000 ]; then
  "$PY" "$GEN/mktree.py" "$GEN/tree" 100 7
  tar -C "$GEN/tree" -cf "$GEN/big.tar" .
  rm -rf "$GEN/tree"
fi
N_SMALL=$(tar -tf "$GEN/small.tar" | grep -vc '/$')
SRC_FILES=$(find "$DATA/src" -type f | wc -l)

# The random-read tool when fio is absent: 4 KiB preads at random aligned
# offsets, readahead off (POSIX_FADV_RANDOM, as fio does).
cat > "$GEN/randread.py" <<'EOF'
import os, random, sys, time
path, count = sys.argv[1], int(sys.argv[2])
fd = os.open(path, os.O_RDONLY)
size = os.fstat(fd).st_size
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
rnd = random.Random(1)
offs = [rnd.randrange(size // 4096) * 4096 for _ in range(count)]
t = time.perf_counter()
for o in offs:
    os.pread(fd, 4096, o)
print("%.6f" % (time.perf_counter() - t))
EOF
cat > "$GEN/meta.py" <<'EOF'
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
names = [os.path.join(d, "f%05d" % i) for i in range(n)]
t = time.perf_counter()
for p in names:
    os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
for p in names:
    os.stat(p)
for p in names:
    os.unlink(p)
print("%.6f" % (time.perf_counter() - t))
EOF

# ---- The two FUSE file systems -----------------------------------------------

LL_BIN=$GEN/passthrough_ll
note "building passthrough_ll from $LL_SRC"
# shellcheck disable=SC2046
gcc -O2 -w $(pkg-config --cflags fuse3) "$LL_SRC" -o "$LL_BIN" $(pkg-config --libs fuse3) \
  || die "cannot build passthrough_ll"

# 50 rules: 3 roots, 26 deny-read and 21 deny-write patterns; none matches a
# path of the workload (checked at the end: the audit log must be empty).
POLICY=(--profile none --rw "$DATA" --ro /usr --ro /etc)
for p in '*.pem' '*.key' '*.p12' '*.pfx' '*.kdbx' '.env' '.env.*' 'id_rsa' 'id_ed25519' \
         'id_ecdsa' '.netrc' '.pgpass' 'credentials.json' '.npmrc' '.pypirc' '*.gpg' \
         '.git-credentials' 'secrets.yaml' '*.keystore' '*.jks'; do
  POLICY+=(--deny-read "$p")
done
for i in 1 2 3 4 5 6; do POLICY+=(--deny-read "$DATA/private-$i/**"); done
for p in '*.lock.deny' '*.orig.deny' 'Makefile.deny' '.gitmodules.deny' '*.rej.deny' \
         'readonly-*' '*.sealed' '.hg' '.svn' '*.frozen'; do
  POLICY+=(--deny-write "$p")
done
for i in 1 2 3 4 5 6 7 8 9 10 11; do POLICY+=(--deny-write "$DATA/frozen-$i"); done
N_RULES=$(( ( ${#POLICY[@]} - 2 ) / 2 ))

FSG_PATH=$MNT_FSG$DATA
LL_PID=
FSG_PID=

start_ll () { # [extra args]
  "$LL_BIN" -f "$@" -o source="$DATA" "$MNT_LL" 2>"$GEN/ll.log" &
  LL_PID=$!
  PIDS+=("$LL_PID"); MOUNTS+=("$MNT_LL")
  wait_mount "$MNT_LL" "$LL_PID" || die "passthrough_ll did not mount: $(tail -3 "$GEN/ll.log")"
}
start_lldp () {
  "$LL_BIN" -f -o default_permissions -o source="$DATA" "$MNT_LLDP" 2>"$GEN/lldp.log" &
  LLDP_PID=$!
  PIDS+=("$LLDP_PID"); MOUNTS+=("$MNT_LLDP")
  wait_mount "$MNT_LLDP" "$LLDP_PID" || die "passthrough_ll -o default_permissions did not mount: $(tail -3 "$GEN/lldp.log")"
}
start_fsg () { # [extra args]
  "$FSGATE" mount "${POLICY[@]}" --audit-log "$GEN/audit.jsonl" "$@" -f "$MNT_FSG" 2>"$GEN/fsg.log" &
  FSG_PID=$!
  PIDS+=("$FSG_PID"); MOUNTS+=("$MNT_FSG")
  wait_mount "$MNT_FSG" "$FSG_PID" || die "fsgate did not mount: $(tail -3 "$GEN/fsg.log")"
  [ -f "$FSG_PATH/big.bin" ] || die "fsgate view does not show $DATA"
}
stop_mount () { # MOUNTPOINT PID
  umount "$1" 2>/dev/null || fusermount3 -u "$1" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
  kill "$2" 2>/dev/null || true
  wait "$2" 2>/dev/null || true
}

start_ll
start_lldp
start_fsg

# ---- Workloads ---------------------------------------------------------------
# Each prints the seconds its measured part took. $1 is the directory the
# target shows $DATA at, $2 a name for its private work directory.

FIO_MIB=64
RR_COUNT=$(( FIO_MIB * 256 ))

w_seq_write () {
  local f=$1/seqw-$2.bin t
  t=$(now_ns)
  dd if=/dev/zero of="$f" bs=1M count="$SIZE_MIB" status=none
  elapsed "$t"
  rm -f "$f"
}
w_seq_read () {
  local t
  t=$(now_ns)
  dd if="$1/big.bin" of=/dev/null bs=1M status=none
  elapsed "$t"
}
w_rand_read () {
  if [ "$USE_FIO" = 1 ]; then
    fio --name=rr --filename="$1/big.bin" --rw=randread --bs=4k --ioengine=psync \
        --io_size=${FIO_MIB}m --invalidate=0 --fadvise_hint=1 --randrepeat=1 \
        --output-format=json 2>/dev/null |
      "$PY" -c 'import json,sys; print("%.6f" % (json.load(sys.stdin)["jobs"][0]["read"]["runtime"] / 1000))'
  else
    "$PY" "$GEN/randread.py" "$1/big.bin" "$RR_COUNT"
  fi
}
w_meta () { "$PY" "$GEN/meta.py" "$1/meta-$2" 10000; rmdir "$1/meta-$2"; }
w_untar () {
  local t
  mkdir -p "$1/tree-$2"
  t=$(now_ns)
  tar -xf "$GEN/small.tar" -C "$1/tree-$2"
  elapsed "$t"
}
# The 20,000-file untar: seconds, or EMFILE when the daemon ran out of fds.
w_untar_big () {
  local t rc=0
  mkdir -p "$1/big-$2"
  t=$(now_ns)
  tar -xf "$GEN/big.tar" -C "$1/big-$2" 2>"$GEN/untar-big-$2.err" || rc=$?
  if [ $rc = 0 ]; then elapsed "$t"
  elif grep -q 'Too many open files' "$GEN/untar-big-$2.err"; then echo EMFILE
  else echo tar-failed; fi
  # after EMFILE the daemon may not manage the removal either (measure()
  # removes the rest on the host)
  rm -rf "$1/big-$2" 2>/dev/null || true
}
w_walk () {
  local t
  t=$(now_ns)
  find "$1/tree-$2" -printf '%p %s %m %U %T@\n' > /dev/null
  elapsed "$t"
}
w_rmrf () {
  local t
  t=$(now_ns)
  rm -rf "$1/tree-$2"
  elapsed "$t"
}
w_grep () {
  local t
  t=$(now_ns)
  grep -r -l 'fsgate_bench_no_such_string' "$1/src" > /dev/null || true
  elapsed "$t"
}

# Targets: name, path the data is at, and how commands run.
TARGETS=(native ll lldp fsgate)
if [ -n "${BENCH_ONLY:-}" ]; then read -r -a TARGETS <<< "$BENCH_ONLY"; fi  # debugging aid
declare -A TPATH=([native]=$DATA [ll]=$MNT_LL [lldp]=$MNT_LLDP [fsgate]=$FSG_PATH [bwrap]=$DATA)
if [ $WITH_BWRAP = 1 ]; then TARGETS+=(bwrap); fi

# /dev and /proc first: the data may live below /dev/shm (--dir /dev/shm).
BWRAP_ARGS=(--ro-bind / / --dev /dev --proc /proc --bind "$DATA" "$DATA" --bind "$GEN" "$GEN"
            --unshare-pid --unshare-ipc --unshare-uts --die-with-parent)
# run TARGET FUNCTION: run a workload function for a target, print seconds.
run () {
  local tgt=$1 fn=$2
  if [ "$tgt" = bwrap ]; then
    bwrap "${BWRAP_ARGS[@]}" env USE_FIO="$USE_FIO" FIO_MIB="$FIO_MIB" RR_COUNT="$RR_COUNT" \
      SIZE_MIB="$SIZE_MIB" GEN="$GEN" PY="$PY" \
      bash -c "set -eu -o pipefail; $(declare -f now_ns elapsed "$fn"); $fn \"\$@\"" \
      bash "${TPATH[$tgt]}" "$tgt"
  else
    "$fn" "${TPATH[$tgt]}" "$tgt"
  fi
}

declare -A RES=()    # "workload|target" -> list of seconds
declare -A FAILED=() # "workload|target" -> why it failed (w_untar_big only)
# measure WORKLOAD TARGET FUNCTION: run it, check it printed seconds, record.
measure () {
  local v
  v=$(run "$2" "$3")
  # Only passthrough_ll may fail the 20,000-file untar (its fd per inode);
  # it is then restarted, so that its leftover fds cannot fail what follows.
  if [ "$3" = w_untar_big ] && [[ $2 =~ ^(ll|lldp)$ ]] && [[ $v =~ ^(EMFILE|tar-failed)$ ]]; then
    FAILED[$1|$2]=$v
    if [ "$2" = ll ]; then stop_mount "$MNT_LL" "$LL_PID"; else stop_mount "$MNT_LLDP" "$LLDP_PID"; fi
    rm -rf "${DATA:?}/big-$2"
    if [ "$2" = ll ]; then start_ll; else start_lldp; fi
    return
  fi
  [[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "$1 on $2 printed '$v', not seconds"
  RES[$1|$2]+="$v "
}

WORKLOADS=(seq_write seq_read_cold seq_read_warm rand_read meta untar walk_cold walk_warm rmrf grep_cold grep_warm)
if [ -f "$GEN/big.tar" ]; then WORKLOADS+=(untar_big); fi
declare -A LABEL=(
  [seq_write]="sequential write ${SIZE_MIB} MiB (dd bs=1M)"
  [seq_read_cold]="sequential read ${SIZE_MIB} MiB, cold"
  [seq_read_warm]="sequential read ${SIZE_MIB} MiB, warm"
  [rand_read]="4 KiB random reads, ${RR_COUNT} ($( [ "$USE_FIO" = 1 ] && echo fio || echo python3 ))"
  [meta]="create+stat+unlink 10,000 files"
  [untar]="untar ${N_SMALL} small files"
  [walk_cold]="find+stat walk (${N_SMALL} files), cold"
  [walk_warm]="find+stat walk (${N_SMALL} files), warm"
  [rmrf]="rm -rf ${N_SMALL} files"
  [grep_cold]="grep -r /usr/include copy (${SRC_FILES} files), cold"
  [grep_warm]="grep -r /usr/include copy (${SRC_FILES} files), warm"
  [untar_big]="untar 20000 small files"
)

[ $COUNT_ONLY = 0 ] || RUNS=0
for r in $(seq "$RUNS"); do
  note "run $r/$RUNS"
  for tgt in "${TARGETS[@]}"; do
    note "  $tgt"
    drop_caches
    measure seq_write "$tgt" w_seq_write
    drop_caches
    measure seq_read_cold "$tgt" w_seq_read
    measure seq_read_warm "$tgt" w_seq_read
    # Random reads with the data in the host page cache (read natively
    # first) but not in a FUSE mount's own cache: the cost of a request.
    drop_caches
    cat "$DATA/big.bin" > /dev/null
    measure rand_read "$tgt" w_rand_read
    measure meta "$tgt" w_meta
    drop_caches
    measure untar "$tgt" w_untar
    drop_caches
    measure walk_cold "$tgt" w_walk
    measure walk_warm "$tgt" w_walk
    measure rmrf "$tgt" w_rmrf
    drop_caches
    measure grep_cold "$tgt" w_grep
    measure grep_warm "$tgt" w_grep
    if [ -f "$GEN/big.tar" ]; then
      drop_caches
      measure untar_big "$tgt" w_untar_big
    fi
  done
done

# ---- Report ------------------------------------------------------------------

med () { echo "${RES[$1|$2]:-}" | tr ' ' '\n' | grep . | median; }
# cell WORKLOAD TARGET: the median, formatted, or why the target failed.
cell () { if [ -n "${FAILED[$1|$2]:-}" ]; then echo "fails (${FAILED[$1|$2]})"; else fmt "$(med "$1" "$2")"; fi; }
# rcell WORKLOAD TARGET BASE: TARGET / BASE, or n/a when either failed.
rcell () {
  if [ -n "${FAILED[$1|$2]:-}" ] || [ -n "${FAILED[$1|$3]:-}" ]; then echo n/a
  else ratio "$(med "$1" "$2")" "$(med "$1" "$3")"; fi
}
ratio () { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
fmt () { awk -v v="$1" 'BEGIN { if (v >= 10) printf "%.1f", v; else if (v >= 1) printf "%.2f", v; else printf "%.3f", v }'; }

if [ $COUNT_ONLY = 0 ]; then
FS_TYPE=$(df -PT "$DATA" | awk 'NR == 2 { print $2 }')
echo
echo "## fsgate file-system benchmark"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); kernel $(uname -r); $(nproc) cores ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)); $(awk '/MemTotal/ { printf "%.0f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
echo "- file system under test: $FS_TYPE ($(df -P "$DATA" | awk 'NR == 2 { print $1 }')), directory $BASE_PARENT"
echo "- libfuse $(pkg-config --modversion fuse3); passthrough_ll built from $LL_SRC with its defaults (cache=auto: 1 s timeouts, no writeback, no keep_cache); ll+dp is the same with -o default_permissions"
echo "- fsgate: $("$FSGATE" --version 2>/dev/null | head -1 || echo fsgate) with $N_RULES policy rules ($(printf '%s ' "${POLICY[@]:0:10}" | sed "s|$BASE|\$DIR|g")...)"
[ -z "${FD_NOTE:-}" ] || echo "- small-file tree $FD_NOTE"
echo "- cold = after sync + echo 3 > /proc/sys/vm/drop_caches$( [ $CAN_DROP = 1 ] || echo ' (NOT dropped: not root)'); warm = repeated at once"
echo "- median of $RUNS runs, seconds (lower is better); ratios > 1 mean fsgate is slower"
echo
hdr="| workload | native | passthrough_ll | ll+dp | fsgate | fsgate/native | fsgate/passthrough_ll | fsgate/ll+dp |"
sep="|---|---:|---:|---:|---:|---:|---:|---:|"
if [ $WITH_BWRAP = 1 ]; then hdr="$hdr bwrap | bwrap/native |"; sep="$sep---:|---:|"; fi
echo "$hdr"
echo "$sep"
for w in "${WORKLOADS[@]}"; do
  line="| ${LABEL[$w]} | $(cell "$w" native) | $(cell "$w" ll) | $(cell "$w" lldp) | $(cell "$w" fsgate) |"
  line="$line $(rcell "$w" fsgate native) | $(rcell "$w" fsgate ll) | $(rcell "$w" fsgate lldp) |"
  if [ $WITH_BWRAP = 1 ]; then line="$line $(cell "$w" bwrap) | $(rcell "$w" bwrap native) |"; fi
  echo "$line"
done
echo
echo "Throughput (MiB/s; random reads in IOPS):"
echo
echo "| workload | native | passthrough_ll | fsgate |"
echo "|---|---:|---:|---:|"
for w in seq_write seq_read_cold seq_read_warm; do
  echo "| ${LABEL[$w]} | $(awk -v s="$SIZE_MIB" -v t="$(med "$w" native)" 'BEGIN{printf "%.0f", s/t}') | $(awk -v s="$SIZE_MIB" -v t="$(med "$w" ll)" 'BEGIN{printf "%.0f", s/t}') | $(awk -v s="$SIZE_MIB" -v t="$(med "$w" fsgate)" 'BEGIN{printf "%.0f", s/t}') |"
done
echo "| ${LABEL[rand_read]} | $(awk -v s="$RR_COUNT" -v t="$(med rand_read native)" 'BEGIN{printf "%.0f", s/t}') | $(awk -v s="$RR_COUNT" -v t="$(med rand_read ll)" 'BEGIN{printf "%.0f", s/t}') | $(awk -v s="$RR_COUNT" -v t="$(med rand_read fsgate)" 'BEGIN{printf "%.0f", s/t}') |"
echo
echo "Raw seconds per run:"
for w in "${WORKLOADS[@]}"; do
  for tgt in "${TARGETS[@]}"; do echo "  $w $tgt: ${RES[$w|$tgt]:-}${FAILED[$w|$tgt]:-}"; done
done

DENIALS=$(grep -c . "$GEN/audit.jsonl" 2>/dev/null || true)
echo
echo "fsgate audit events during the run: ${DENIALS:-0} (expected 0: no rule matches the workload)"
fi

# ---- Request counts (--count) ---------------------------------------------------

if [ $COUNT = 1 ]; then
  stop_mount "$MNT_LL" "$LL_PID"
  stop_mount "$MNT_LLDP" "$LLDP_PID"
  stop_mount "$MNT_FSG" "$FSG_PID"
  # stats_delta BEFORE AFTER: the workload's part of two `fsgate mount
  # --stats` tables: "N total: OP n (CPU us/request), ...".
  stats_delta () {
    awk 'FNR <= 2 || $1 == "total" { next }
         NR == FNR { r[$1] = $2; ms[$1] = $3; next }
         { d = $2 - r[$1]; if (d <= 0) next; n += d; c = ($3 - ms[$1]) * 1000 / d
           out = out sprintf(" %s %d (%.1f us)", $1, d, c) }
         END { printf "%d total:%s\n", n, out }' "$1" "$2"
  }
  # stats_snapshot PID COPY: fsgate's table so far (SIGUSR1), copied.
  stats_snapshot () {
    : > "$GEN/stats.txt"
    kill -USR1 "$1"
    for _ in $(seq 50); do grep -q '^total ' "$GEN/stats.txt" 2>/dev/null && break; sleep 0.1; done
    grep -q '^total ' "$GEN/stats.txt" || die "fsgate wrote no --stats table within 5 s of SIGUSR1"
    cp "$GEN/stats.txt" "$2"
  }
  count_ops () { # LOGFILE -> "N total: OP n, OP n, ..."
    grep -a -o 'opcode: [A-Z_]*' "$1" | awk '{ c[$2]++; n++ } END { printf "%d total:", n; for (k in c) printf " %s %d", k, c[k]; print "" }'
  }
  echo
  echo "FUSE requests per workload (one run each; passthrough_ll from its -d log,"
  echo "fsgate from --stats with the daemon's CPU time per operation):"
  for w in "${WORKLOADS[@]}"; do
    for tgt in ll lldp fsgate; do
      case $tgt in
        ll|lldp)
          m=$( [ $tgt = ll ] && echo "$MNT_LL" || echo "$MNT_LLDP" )
          extra=(); [ $tgt = lldp ] && extra=(-o default_permissions)
          "$LL_BIN" -d "${extra[@]}" -o source="$DATA" "$m" 2>"$GEN/count.log" &
          pid=$!; PIDS+=("$pid"); wait_mount "$m" "$pid" || die "passthrough_ll -d did not mount" ;;
        fsgate)
          m=$MNT_FSG
          rm -f "$GEN/stats.txt"
          "$FSGATE" mount "${POLICY[@]}" --stats "$GEN/stats.txt" -f "$MNT_FSG" 2>"$GEN/count.log" &
          pid=$!; PIDS+=("$pid"); wait_mount "$MNT_FSG" "$pid" || die "fsgate --stats did not mount" ;;
      esac
      # Reproduce the state the timed workload starts from.
      case $w in
        walk_*|rmrf) run "$tgt" w_untar > /dev/null ;;
      esac
      case $w in
        seq_read_warm) run "$tgt" w_seq_read > /dev/null ;;
        walk_warm) drop_caches; run "$tgt" w_walk > /dev/null ;;
        grep_warm) run "$tgt" w_grep > /dev/null ;;
      esac
      # warm workloads start from the caches the setup above filled
      case $w in *_warm) ;; *) drop_caches ;; esac
      [ $w = rand_read ] && cat "$DATA/big.bin" > /dev/null
      # Only the workload's own requests: fsgate's counters, the log's tail.
      : > "$GEN/count.log"
      if [ $tgt = fsgate ]; then
        stats_snapshot "$pid" "$GEN/stats-before.txt"
      fi
      case $w in
        seq_write) run "$tgt" w_seq_write ;;
        seq_read_*) run "$tgt" w_seq_read ;;
        rand_read) run "$tgt" w_rand_read ;;
        meta) run "$tgt" w_meta ;;
        untar) run "$tgt" w_untar ;;
        untar_big) run "$tgt" w_untar_big ;;
        walk_*) run "$tgt" w_walk ;;
        rmrf) run "$tgt" w_rmrf ;;
        grep_*) run "$tgt" w_grep ;;
      esac > /dev/null
      sleep 0.2
      if [ $tgt = fsgate ]; then
        stats_snapshot "$pid" "$GEN/stats-after.txt"
        [ -d "$FSG_PATH/tree-$tgt" ] && rm -rf "$FSG_PATH/tree-$tgt"
        stop_mount "$m" "$pid"
        echo "  $w fsgate: $(stats_delta "$GEN/stats-before.txt" "$GEN/stats-after.txt")"
      else
        echo "  $w $tgt: $(count_ops "$GEN/count.log")"
        [ -d "$m/tree-$tgt" ] && rm -rf "$m/tree-$tgt"
        stop_mount "$m" "$pid"
      fi
    done
  done
fi

# ---- fsgate-run startup and a small build ----------------------------------------

if [ $WITH_RUNNER = 1 ]; then
  echo
  if [[ $DATA == /dev/* ]]; then
    echo "fsgate-run: skipped (the data is under /dev, which fsgate-run and bwrap replace; run without --dir /dev/...)"
  elif [ ! -x "$FSGATE_RUN" ]; then
    echo "fsgate-run: skipped ($FSGATE_RUN does not exist yet)"
  elif ! command -v bwrap >/dev/null; then
    echo "fsgate-run: skipped (bwrap is not installed)"
  else
    # A small C project: 8 translation units and a header.
    mkdir -p "$GEN/proj"
    echo 'int f0 (int x);' > "$GEN/proj/p.h"
    for i in 1 2 3 4 5 6 7; do
      echo "int f$i (int x);" >> "$GEN/proj/p.h"
      printf '#include <stdio.h>\n#include <string.h>\n#include "p.h"\nint f%d (int x) { char b[64]; snprintf (b, sizeof b, "%%d", x); return (int) strlen (b) + f%d (x - 1); }\n' "$i" $((i - 1)) > "$GEN/proj/f$i.c"
    done
    printf '#include "p.h"\nint f0 (int x) { return x; }\n' > "$GEN/proj/f0.c"
    printf '#include <stdio.h>\n#include "p.h"\nint main (void) { printf ("%%d\\n", f7 (42)); return 0; }\n' > "$GEN/proj/main.c"
    tar -C "$GEN" -cf "$GEN/proj.tar" proj
    rm -rf "$GEN/proj"
    BUILD_CMD="tar -xf $GEN/proj.tar && cd proj && gcc -O1 -c *.c && gcc -o prog *.o && ./prog > /dev/null"
    RW=$DATA/runner
    mkdir -p "$RW"
    BW=(bwrap --unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-net
        --ro-bind / / --dev /dev --proc /proc --bind "$RW" "$RW" --tmpfs /tmp
        --die-with-parent --new-session --chdir "$RW")
    FR=("$FSGATE_RUN" --rw "$RW" -C "$RW")
    declare -A RT=()
    N_START=$(( RUNS * 7 ))
    "${FR[@]}" -- true || die "fsgate-run -- true failed"
    "${BW[@]}" true || die "bwrap true failed"
    for _ in $(seq "$N_START"); do
      t=$(now_ns); true; RT[start|native]+="$(elapsed "$t") "
      t=$(now_ns); "${BW[@]}" true; RT[start|bwrap]+="$(elapsed "$t") "
      t=$(now_ns); "${FR[@]}" -- true; RT[start|fsgate-run]+="$(elapsed "$t") "
    done
    for r in $(seq "$RUNS"); do
      for tgt in native bwrap fsgate-run; do
        rm -rf "$RW/proj"
        case $tgt in
          native) t=$(now_ns); (cd "$RW" && bash -c "$BUILD_CMD"); RT[build|$tgt]+="$(elapsed "$t") " ;;
          bwrap) t=$(now_ns); "${BW[@]}" bash -c "$BUILD_CMD"; RT[build|$tgt]+="$(elapsed "$t") " ;;
          fsgate-run) t=$(now_ns); "${FR[@]}" -- bash -c "$BUILD_CMD"; RT[build|$tgt]+="$(elapsed "$t") " ;;
        esac
      done
    done
    rmed () { echo "${RT[$1|$2]}" | tr ' ' '\n' | grep . | median; }
    echo "fsgate-run against bwrap (equivalent binds: / read-only, DIR writable, new namespaces) and no sandbox:"
    echo
    echo "| workload | native | bwrap | fsgate-run | fsgate-run/bwrap | fsgate-run/native |"
    echo "|---|---:|---:|---:|---:|---:|"
    for w in start build; do
      n=$(rmed "$w" native); b=$(rmed "$w" bwrap); f=$(rmed "$w" fsgate-run)
      lbl=$( [ $w = start ] && echo "startup: \`-- true\` (median of $N_START)" || echo "small build: untar + gcc 9 files + link + run (median of $RUNS)" )
      echo "| $lbl | $(fmt "$n") | $(fmt "$b") | $(fmt "$f") | $(ratio "$f" "$b") | $(ratio "$f" "$n") |"
    done
  fi
fi
