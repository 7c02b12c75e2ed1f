#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# fsgate on a tree bigger than its fd limit: find+stat, du, git status and
# rm -rf over 100,000 files through the view must give exactly what they
# give natively, with no EMFILE anywhere.
#  (a) the commands run as an unprivileged user (65534) on a tree it owns,
#      and the daemon runs with `ulimit -n 1024` (as root with allow_other:
#      /dev/fuse is root-only here, so an unprivileged daemon cannot mount);
#  (b) everything as root, the daemon with the default limit (hard 20,000
#      here, far below the number of files).
# Also reports the daemon's memory per cached inode (VmRSS delta).
# Needs root (to create the users' trees and switch users) and /dev/fuse.

# ext4 (birth times, like most hosts), not a tmpfs /tmp
TMPDIR=${FSGATE_SCALE_TMPDIR:-/var/tmp}
. "$(dirname "$0")/../run/libtest.sh"

FSGATE=${FSGATE:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/fsgate/fsgate}
NFILES=${FSGATE_SCALE_FILES:-100000}
NOBODY=65534

if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ] || ! command -v setpriv >/dev/null; then
    skip "fsgate at scale" "root, /dev/fuse and setpriv"
    done_testing
fi

# make_tree DIR: NFILES empty files in 100 directories, a few with data, a
# symlink per directory, committed to a git repository.
make_tree () {
    python3 - "$1" "$NFILES" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
os.makedirs(root)
per = max(n // 100, 1)
for d in range(100):
    dd = os.path.join(root, 'd%03d' % d)
    os.mkdir(dd)
    for f in range(per):
        fd = os.open(os.path.join(dd, 'f%05d' % f), os.O_CREAT | os.O_WRONLY, 0o644)
        if f == 0:
            os.write(fd, b'x' * (d * 100 + 1))
        os.close(fd)
    os.symlink('../d000/f00000', os.path.join(dd, 'link'))
EOF
    (cd "$1" && git init -q . && git add -A &&
        git -c user.name=t -c user.email=t@t commit -q -m tree) || return 1
    # something for git status to report
    echo changed > "$1/d001/f00001"
    touch "$1/untracked"
}

# as UID CMD...: run as UID (0: as is).
as () {
    local uid=$1; shift
    if [ "$uid" = 0 ]; then "$@"; else
        setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"
    fi
}

# observe DIR OUT UID: what the workloads see in DIR.
observe () {
    local dir=$1 out=$2 uid=$3
    as "$uid" env -C "$dir" HOME="$TESTDIR" LC_ALL=C bash -c '
        find . -printf "%p %s %m %U %G %y %l\n" | sort > "$0.find"
        du -s . > "$0.du"; du -s --apparent-size . >> "$0.du"
        git -c safe.directory="*" status --porcelain > "$0.git"
    ' "$out" 2> "$out.err"
}

rss_kib () { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

# run_case NAME UID NOFILE
run_case () {
    local name=$1 uid=$2 nofile=$3
    local base=$TESTDIR/$name
    local tree=$base/tree mnt=$base/mnt out=$base/out
    local pid t0 t1 rss0 rss1 n

    mkdir -p "$base" "$mnt" "$out"
    make_tree "$tree" || { not_ok "$name: create the tree"; return; }
    chown -R "$uid:$uid" "$base"
    chmod 0777 "$out"

    observe "$tree" "$out/native" "$uid"

    bash -c 'ulimit -n "$1" && exec "$2" mount --profile none --rw "$3" -f "$4"' \
        _ "$nofile" "$FSGATE" "$tree" "$mnt" 2> "$out/daemon.err" &
    pid=$!
    track $pid
    for _ in $(seq 200); do
        grep -q " $mnt " /proc/self/mountinfo && break
        sleep 0.05
    done
    if ! grep -q " $mnt " /proc/self/mountinfo; then
        not_ok "$name: mount"; diag "$(cat "$out/daemon.err")"; return
    fi
    diag "$name: daemon fd limit $(awk '/Max open files/ {print $4, $5}' /proc/$pid/limits)"
    rss0=$(rss_kib $pid)

    t0=$(date +%s.%N)
    observe "$mnt$tree" "$out/view" "$uid"
    t1=$(date +%s.%N)
    rss1=$(rss_kib $pid)
    n=$(wc -l < "$out/view.find")
    diag "$name: find+du+git status through the view: $(echo "$t1 - $t0" | bc) s;" \
        "daemon VmRSS $rss0 -> $rss1 KiB for ~$n inodes:" \
        "$(echo "($rss1 - $rss0) * 1024 / $n" | bc) bytes per inode;" \
        "fds open $(ls /proc/$pid/fd | wc -l)"

    is "$name: no errors through the view" "$(cat "$out/view.err")" ""
    check "$name: find -printf identical ($n entries)" cmp -s "$out/native.find" "$out/view.find"
    is "$name: du totals identical" "$(cat "$out/view.du")" "$(cat "$out/native.du")"
    check "$name: git status identical" cmp -s "$out/native.git" "$out/view.git"
    is "$name: git status content" "$(cat "$out/view.git")" "$(printf ' M d001/f00001\n?? untracked')"

    t0=$(date +%s.%N)
    as "$uid" rm -rf "$mnt$tree/.git" "$mnt$tree/untracked" $(printf "$mnt$tree/d%03d " $(seq 0 99)) \
        2> "$out/rm.err"
    t1=$(date +%s.%N)
    diag "$name: rm -rf through the view: $(echo "$t1 - $t0" | bc) s"
    is "$name: rm -rf without errors" "$(cat "$out/rm.err")" ""
    is "$name: the host tree is empty" "$(ls -A "$tree")" ""
    if grep -qi "too many open files" "$out"/*.err; then
        not_ok "$name: EMFILE seen"; diag "$(grep -i "too many open files" "$out"/*.err | head -3)"
    else
        ok "$name: no EMFILE"
    fi

    kill -TERM $pid
    wait $pid 2>/dev/null
    check "$name: unmounted" bash -c "! grep -q ' $mnt ' /proc/self/mountinfo"
}

run_case unpriv "$NOBODY" 1024
run_case root 0 "$(ulimit -Hn)"

# A chain of 20,000 directories with a budget of 32 fds exercises the
# reopen of evicted ancestors (top down, without recursion, so depth cannot
# overflow a worker's stack) and 20,000 negative LOOKUPs followed by mkdir
# under fd pressure (an errno read after an unpin once turned ENOENT into an
# occasional EAGAIN; this catches it only by chance).
deep=$TESTDIR/deep
mkdir -p "$deep/tree" "$deep/mnt"
FSGATE_FD_BUDGET=32 "$FSGATE" mount --profile none --rw "$deep/tree" -f "$deep/mnt" 2> "$deep/daemon.err" &
dpid=$!
track $dpid
for _ in $(seq 200); do grep -q " $deep/mnt " /proc/self/mountinfo && break; sleep 0.05; done
out=$(python3 - "$deep/mnt$deep/tree" 2>&1 <<'EOF'
import os, sys
base = sys.argv[1]
os.chdir(base)
for i in range(64):
    open("f%d" % i, "w").close()
for i in range(20000):
    os.mkdir("d"); os.chdir("d")
for i in range(64):
    os.stat(os.path.join(base, "f%d" % i))   # evict the chain
open("leaf", "w").write("deep")
print(open("leaf").read())
EOF
)
is "a 20,000-deep directory chain through a 32-fd daemon: created and read back" "$out" "deep"
check "... the daemon survived" kill -0 $dpid
kill -TERM $dpid; wait $dpid 2>/dev/null

done_testing
