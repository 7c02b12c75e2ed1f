#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The hybrid view decides exactly as the pure view. For generated trees and
# rule sets (hybrid-gen.py: literal, glob, recursive and floating deny-read
# and deny-write rules, nested roots, a hard link to a denied file; the
# tree is a hybrid tree of the policy), the same probe (lstat, read, write,
# a new name) runs through fsgate-run with FSGATE_HYBRID=1 and
# FSGATE_HYBRID=0 and must print the same; both must agree with `fsgate
# explain`; the directories explain marks [bound: DIR] must be mount points
# inside the sandbox, and some must be (else the test compares nothing).
# Then what a bind could expose that the view does not, each with a
# positive control: host sockets and FIFOs (only hybrid trees are bound),
# hard links out of a denied directory, a denied file's other name on an
# overlayfs, a denied directory seen through another mount.
export TMPDIR=/var/tmp # fsgate-run binds nothing below its private /tmp
GEN="$(cd "$(dirname "$0")" && pwd)/hybrid-gen.py"
. "$(dirname "$0")/../run/libtest.sh"
require_fsgate

FSGATE=${FSGATE:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/fsgate/fsgate}
SEEDS=${HYBRID_SEEDS:-12}
# bind every uniform tree (the default binds only the first 16, system
# trees first), so that the generated trees are bound too
export FSGATE_HYBRID_MAX=100000
# on by default; set here so that no FSGATE_HYBRID of the caller's changes it
export FSGATE_HYBRID=1

mounted=()
cleanup_mounts () {
  local m
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" 2>/dev/null
  done
  _cleanup
}
trap cleanup_mounts EXIT

# What explain's decision means for one probe line (see hybrid-gen.py).
expected () { # ACCESS PROBE-LINE
  case "$1" in
    absent) [[ "$2" == *" lstat=ENOENT"* ]] ;;
    # (denied names can also be hidden: ENOENT, as some rules now do)
    deny) [[ "$2" == *" lstat=EACCES"* || "$2" == *" read=EACCES"* || "$2" == *" lstat=ENOENT"* ]] ;;
    ro) [[ "$2" == *" lstat=OK"* && "$2" == *" write=EROFS"* && "$2" != *" read=EACCES"* ]] ;;
    rw) [[ "$2" == *" lstat=OK"* && "$2" == *" write=OK"* ]] ;;
    *) false ;;
  esac
}

total_bound=0
total_paths=0
for seed in $(seq 1 "$SEEDS"); do
  base="$TESTDIR/t$seed"
  mkdir "$base"
  python3 "$GEN" tree "$base" "$seed" > "$TESTDIR/gen"
  sed '/^--$/,$d' "$TESTDIR/gen" > "$TESTDIR/policy.ini"
  sed '1,/^--$/d' "$TESTDIR/gen" > "$TESTDIR/paths"
  mapfile -t paths < "$TESTDIR/paths"
  total_paths=$((total_paths + ${#paths[@]}))

  FSGATE_HYBRID=1 "$FSGATE" explain --policy "$TESTDIR/policy.ini" "${paths[@]}" > "$TESTDIR/explain" 2>&1
  for m in 1 0; do
    FSGATE_HYBRID=$m run_fsg --policy "$TESTDIR/policy.ini" -C / -- \
      sh -c 'python3 "$@"; echo "-- mounts"; cat /proc/self/mountinfo' sh "$GEN" probe "${paths[@]}" \
      > "$TESTDIR/out$m" 2> "$TESTDIR/err$m"
    sed '/^-- mounts$/,$d' "$TESTDIR/out$m" > "$TESTDIR/probe$m"
  done
  sed '1,/^-- mounts$/d' "$TESTDIR/out1" | awk '{print $5}' > "$TESTDIR/inside-mounts"

  if ! cmp -s "$TESTDIR/probe1" "$TESTDIR/probe0" || [ ! -s "$TESTDIR/probe0" ]; then
    not_ok "seed $seed: the hybrid view and the pure view give the same results"
    diff "$TESTDIR/probe0" "$TESTDIR/probe1" | sed 's/^/# /' | head -20
    sed 's/^/# policy: /' "$TESTDIR/policy.ini"
    sed 's/^/# stderr: /' "$TESTDIR/err1" | head -5
    continue
  fi
  bad=""
  bound_here=0
  while read -r access path rest; do
    # explain's indented detail lines (git protection) are no decisions
    [[ "$access" == /* || "$path" == "" || "$access" == *: ]] && continue
    # a hard link to a literally denied file: both views deny it by
    # identity, which explain (a path tool) does not show
    [[ "$path" == */hardlink-* ]] && access=deny
    line=$(grep -F -- "$path " "$TESTDIR/probe0" | awk -v p="$path" '$1 == p' | head -1)
    expected "$access" "$line" || bad="$bad
# explain: $access $path $rest
# probe:   $line"
    if [[ "$rest" == *"[bound: "* ]]; then
      dir=${rest##*\[bound: }
      dir=${dir%]}
      if [[ "$dir" == "$base"* ]]; then
        bound_here=$((bound_here + 1))
        grep -qxF -- "$dir" "$TESTDIR/inside-mounts" || bad="$bad
# explain says $path is bound at $dir, which is no mount point inside"
      fi
    fi
  done < "$TESTDIR/explain"
  total_bound=$((total_bound + bound_here))
  if [ -n "$bad" ]; then
    not_ok "seed $seed: the probe matches fsgate explain (${#paths[@]} paths, $bound_here bound)"
    echo "$bad" | head -20
    sed 's/^/# policy: /' "$TESTDIR/policy.ini"
  else
    ok "seed $seed: both views agree with each other and with fsgate explain (${#paths[@]} paths, $bound_here under bound directories)"
  fi
done

# The comparison means something only if the hybrid view bound parts of
# the generated trees.
check "bound paths inside the generated trees: $total_bound of $total_paths" test "$total_bound" -gt 20

# System trees of the default profile are bound; the workspace is not.
out=$(run_fsg --rw "$WORK" -C "$WORK" -- sh -c 'awk "{print \$5}" /proc/self/mountinfo' 2>/dev/null)
check "default profile: /usr is a bind mount inside the sandbox" grep -qx /usr <<< "$out"
check "default profile: the writable workspace is not bound" bash -c "! grep -qx '$WORK' <<< '$out'"
out=$(FSGATE_HYBRID=0 run_fsg -- sh -c 'awk "{print \$5}" /proc/self/mountinfo' 2>/dev/null)
check "FSGATE_HYBRID=0: /usr is served by the daemon" bash -c "! grep -qx /usr <<< '$out'"
out=$(env -u FSGATE_HYBRID "$FSGATE_RUN" --quiet -- sh -c 'awk "{print \$5}" /proc/self/mountinfo' 2>/dev/null)
check "FSGATE_HYBRID unset (the default): /usr is bound" grep -qx /usr <<< "$out"
printf '[filesystem]\nhybrid = off\n' > "$TESTDIR/off.ini"
out=$(run_fsg --policy "$TESTDIR/off.ini" -v -- sh -c 'awk "{print \$5}" /proc/self/mountinfo' 2>&1)
check "hybrid = off in the policy: /usr is served by the daemon" bash -c "! grep -qx /usr <<< '$out'"
check "... and -v says why" grep -q 'hybrid view off (the policy says hybrid = off)' <<< "$out"
out=$(FSGATE_HYBRID=1 run_fsg --policy "$TESTDIR/off.ini" -- sh -c 'awk "{print \$5}" /proc/self/mountinfo' 2>&1)
check "FSGATE_HYBRID=1 does not override hybrid = off" bash -c "! grep -qx /usr <<< '$out'"
FSGATE_HYBRID=sometimes "$FSGATE_RUN" -- true 2> "$TESTDIR/err"
is "FSGATE_HYBRID=sometimes: a usage error (2)" "$?" 2
check "... that names the variable and the words it takes" grep -q "FSGATE_HYBRID='sometimes' is not one of 0, off" "$TESTDIR/err"
"$FSGATE_RUN" --quiet --json "$TESTDIR/r.json" -- true
is "the JSON report lists the bound directories" "$(json_get "$TESTDIR/r.json" "'/usr' in r['hybrid']['bound']")" True
FSGATE_HYBRID=0 "$FSGATE_RUN" --quiet --json "$TESTDIR/r.json" -- true
is "... and, with the hybrid view off, why" "$(json_get "$TESTDIR/r.json" "r['hybrid']")" "{'bound': [], 'off': 'FSGATE_HYBRID=0'}"
out=$(run_fsg -- sh -c 'grep " /usr " /proc/self/mountinfo' 2>/dev/null)
check "the bind of /usr is read-only, nosuid, nodev" grep -q ' ro,nosuid,nodev' <<< "$out"
out=$(run_fsg -v -- true 2>&1)
check "fsgate-run -v names what is bound" grep -q 'hybrid view: .* bound read-only (.*/usr' <<< "$out"
out=$("$FSGATE_RUN" --doctor 2>&1)
check "fsgate-run --doctor names what is bound" grep -q '^info  hybrid view: .* bound read-only (.*/usr' <<< "$out"
check "... and found no host socket or FIFO below it" grep -q '^ok    hybrid view: no host socket or FIFO below the bound directories' <<< "$out"
out=$(FSGATE_HYBRID_MAX=1 run_fsg -v -- sh -c 'grep -c . /proc/self/mountinfo' 2>&1)
check "FSGATE_HYBRID_MAX=1: 1 tree bound, the rest served" grep -q 'hybrid view: 1 host directory bound read-only (/[^ )]*\( (less [^)]*)\)\?).* more uniform directories served beyond the first 1 binds' <<< "$out"

# The one documented difference: operations across a bind's edge are refused
# with the mount-point errnos (rename/rmdir of the bound directory: EBUSY;
# rename/link between it and the rest of the view: EXDEV) where the daemon
# says EROFS. Refused in both modes.
edge='
import os, errno
for f in (lambda: os.rename("/usr", "/usr2"), lambda: os.rename("/etc/passwd", "/usr/passwd"),
          lambda: os.link("/usr/bin/true", "/etc/t"), lambda: os.chmod("/usr", 0o755),
          lambda: os.rename("/usr/bin/true", "/usr/bin/t")):
    try: f(); print("OK", end=" ")
    except OSError as e: print(errno.errorcode[e.errno], end=" ")'
is "operations at a bind's edge: EBUSY/EXDEV with the hybrid view" \
  "$(run_fsg -- python3 -c "$edge" 2>/dev/null)" "EBUSY EXDEV EXDEV EROFS EROFS "
is "... EROFS without it" "$(FSGATE_HYBRID=0 run_fsg -- python3 -c "$edge" 2>/dev/null)" "EROFS EROFS EROFS EROFS EROFS "

# Where a seccomp filter (a container runtime's) refuses the new mount API,
# the hybrid view is off and says so, and runs still work.
no_open_tree () {
  python3 -c '
import ctypes, os, sys
l = ctypes.CDLL("libseccomp.so.2")
l.seccomp_init.restype = ctypes.c_void_p
ctx = ctypes.c_void_p(l.seccomp_init(0x7fff0000))         # SCMP_ACT_ALLOW
nr = l.seccomp_syscall_resolve_name(b"open_tree")
assert l.seccomp_rule_add(ctx, 0x00050000 | 1, nr, 0) == 0  # SCMP_ACT_ERRNO(EPERM)
assert l.seccomp_load(ctx) == 0
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}
out=$(no_open_tree "$FSGATE_RUN" -v -- sh -c 'grep -c " /usr " /proc/self/mountinfo; cat /etc/hostname >/dev/null && echo view-ok' 2>&1)
check "open_tree refused by seccomp: hybrid view off with the reason, /usr served, the run works" \
  grep -q 'hybrid view off (open_tree() is refused here' <<< "$out"
is "... and the command sees no bind" "$(grep -v '^fsgate-run' <<< "$out")" "0
view-ok"

# ---- What a bind could show that the view does not ------------------------

# Host sockets and FIFOs. A uniform read-only directory outside the hybrid
# trees holds a host process's listening Unix socket and a FIFO it reads.
# Through the view a socket cannot be connected to and a FIFO is the view's
# own (no reader); only hybrid trees are bound, so it stays that way.
S=$TESTDIR/sockdir
mkdir -p "$S"
python3 - "$S" <<'PY' &
import os, socket, sys
d = sys.argv[1]
s = socket.socket(socket.AF_UNIX)
s.bind(d + "/host.sock")
s.listen(8)
os.mkfifo(d + "/host.fifo")
r = os.open(d + "/host.fifo", os.O_RDONLY | os.O_NONBLOCK)
open(d + "/ready", "w").close()
while True:
    s.accept()[0].close()
PY
track $!
wait_for "$S/ready"
probe_sock='
import errno, os, socket, sys
d, out = sys.argv[1], []
try:
    socket.socket(socket.AF_UNIX).connect(d + "/host.sock")
    out.append("connect=OK")
except OSError as e:
    out.append("connect=" + errno.errorcode[e.errno])
try:
    os.close(os.open(d + "/host.fifo", os.O_WRONLY | os.O_NONBLOCK))
    out.append("fifo=OK")
except OSError as e:
    out.append("fifo=" + errno.errorcode[e.errno])
print(" ".join(out))'
is "control: natively the host socket accepts and the FIFO has a reader" \
  "$(python3 -c "$probe_sock" "$S")" "connect=OK fifo=OK"
printf '[policy]\nprofile = none\n[filesystem]\nreadonly = /\n' > "$TESTDIR/sock.ini"
for m in 1 0; do
  is "FSGATE_HYBRID=$m: outside the hybrid trees the socket refuses and the FIFO has no reader" \
    "$(FSGATE_HYBRID=$m run_fsg --policy "$TESTDIR/sock.ini" -C / -- python3 -c "$probe_sock" "$S" 2>&1)" \
    "connect=ECONNREFUSED fifo=ENXIO"
done
out=$("$FSGATE_RUN" --policy "$TESTDIR/sock.ini" -v -- true 2>&1)
check "... the directory is not bound (it is no hybrid tree)" bash -c "! grep -q '$S' <<< '$out'"
printf '[policy]\nprofile = none\n[filesystem]\nreadonly = /\nhybrid-trees = %s\n' "$S" > "$TESTDIR/sock-tree.ini"
out=$("$FSGATE_RUN" --policy "$TESTDIR/sock-tree.ini" --doctor 2>&1)
check "a hybrid tree that holds them: --doctor warns, naming the socket" \
  grep -q "^warn  hybrid view: .*$S/host.sock (socket)" <<< "$out"
check "... and the FIFO" grep -q "^warn  hybrid view: .*$S/host.fifo (FIFO)" <<< "$out"

# /usr/local is the administrator's, not the distribution's: software built
# from source keeps its sockets in /usr/local/var/run. A bind of /usr leaves
# it to the daemon (a hole), so a host daemon's socket there refuses as it
# does through the pure view; naming /usr/local in hybrid-trees binds it
# (the positive control). In a private mount namespace where /usr is an
# overlay with its upper layer here, so the host's /usr is never written:
# first the socket on /usr's own file system (one bind of /usr with the
# hole), then on a tmpfs mounted at /usr/local/var (/usr is split).
printf '[policy]\nprofile = workspace-write\n[filesystem]\nhybrid-trees = /usr/local\n' > "$TESTDIR/local.ini"
mkdir -p "$TESTDIR/usr-ov/u" "$TESTDIR/usr-ov/w"
usr_local_out=$(unshare -m --propagation private env TESTDIR="$TESTDIR" FSGATE="$FSGATE" bash -c '
  set -u
  mount -t overlay fsgate-test-usr -o "lowerdir=/usr,upperdir=$TESTDIR/usr-ov/u,workdir=$TESTDIR/usr-ov/w" /usr ||
    { echo "no overlay on /usr"; exit 0; }
  probe="import socket, sys
try:
    socket.socket(socket.AF_UNIX).connect(sys.argv[1]); print(\"connect=OK\")
except OSError as e:
    print(\"connect=\" + e.__class__.__name__)"
  listen () { # DIR: a host daemon listening on DIR/d.sock
    mkdir -p "$1"
    python3 -c "import os, socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1] + \"/d.sock\"); s.listen(8)
open(sys.argv[1] + \"/ready\", \"w\").close()
while True: s.accept()[0].close()" "$1" &
    pids+=($!)
    for _ in $(seq 600); do [ -e "$1/ready" ] && break; sleep 0.05; done
  }
  pids=()
  trap "kill \${pids[*]} 2>/dev/null" EXIT
  for where in same-fs tmpfs; do
    d=/usr/local/fsgate-test-$where
    if [ $where = tmpfs ]; then
      mkdir -p /usr/local/var && mount -t tmpfs fsgate-test-ulv /usr/local/var || { echo "no tmpfs"; exit 0; }
      d=/usr/local/var/run/fsgate-test
    fi
    listen "$d"
    echo "$where native: $(python3 -c "$probe" "$d/d.sock")"
    for m in 1 0; do
      echo "$where hybrid=$m: $(FSGATE_HYBRID=$m "$FSGATE_RUN" --quiet -- python3 -c "$probe" "$d/d.sock" 2>&1)"
    done
    echo "$where named: $("$FSGATE_RUN" --quiet --policy "$TESTDIR/local.ini" -- \
      python3 -c "$probe" "$d/d.sock" 2>&1)"
    echo "$where -v: $("$FSGATE_RUN" -v -- true 2>&1 | grep -o "hybrid view: .*")"
    echo "$where explain: $("$FSGATE" explain "$d/d.sock" /usr/bin/env | grep -o "\[bound: [^]]*\]" | tr "\n" " ")"
    echo "$where doctor: $("$FSGATE_RUN" --doctor 2>&1 | grep -o "hybrid view: no host socket or FIFO below")"
  done
' 2>&1)
diag "$usr_local_out"
for where in same-fs tmpfs; do
  usr=/usr; [ $where = tmpfs ] && usr=/usr/bin # split by the mount below
  line () { sed -n "s/^$where $1: //p" <<< "$usr_local_out"; }
  is "/usr/local ($where): control: natively the host daemon's socket accepts" "$(line native)" "connect=OK"
  for m in 1 0; do
    is "/usr/local ($where): FSGATE_HYBRID=$m: the socket refuses, as through the view" \
      "$(line "hybrid=$m")" "connect=ConnectionRefusedError"
  done
  is "/usr/local ($where): control: hybrid-trees = /usr/local binds it, and the socket accepts" \
    "$(line named)" "connect=OK"
  check "/usr/local ($where): -v says /usr/local is served" \
    grep -qE "/usr \(less /usr/local\)|/usr/local \(in /usr/local, which the administrator fills" <<< "$(line -v)"
  is "/usr/local ($where): explain binds /usr/bin/env, not the socket" "$(line explain)" "[bound: $usr] "
  is "/usr/local ($where): --doctor finds no socket below the bound directories" \
    "$(line doctor)" "hybrid view: no host socket or FIFO below"
done

# Mounts stacked at one point, the top one listed first in mountinfo (a
# procfs moved onto a tmpfs): the file system a directory is on is told by
# its mount id, not by the path, which names the mount listed last (here the
# tmpfs). The procfs on top must not be bound; the control binds the tmpfs
# alone.
mkdir -p "$TESTDIR/stack/p1" "$TESTDIR/stack/p2"
printf '[policy]\nprofile = none\n[filesystem]\nreadonly = /\nhybrid-trees = %s\n' "$TESTDIR/stack/p2" > "$TESTDIR/stack.ini"
stack_out=$(unshare -m --propagation private env P="$TESTDIR/stack" INI="$TESTDIR/stack.ini" bash -c '
  mount -t proc proc "$P/p1" && mount -t tmpfs fsgate-test-stack "$P/p2" || exit 0
  echo "tmpfs: $("$FSGATE_RUN" -v --policy "$INI" -C / -- true 2>&1 | grep -o "hybrid view: .*")"
  mount --move "$P/p1" "$P/p2" || exit 0
  echo "order: $(grep -F " $P/p2 " /proc/self/mountinfo | sed "s/.* - \([^ ]*\) .*/\1/" | tr "\n" " ")"
  echo "proc: $("$FSGATE_RUN" -v --policy "$INI" -C / -- true 2>&1 | grep -o "hybrid view: .*")"
' 2>&1)
diag "$stack_out"
check "stacked mounts: control: a tmpfs alone there is bound" \
  grep -qE "^tmpfs: hybrid view: .*bound read-only \([^;]*$TESTDIR/stack/p2[ )]" <<< "$stack_out"
is "stacked mounts: control: the procfs on top is listed first" "$(sed -n 's/^order: //p' <<< "$stack_out")" "proc tmpfs "
check "stacked mounts: the procfs on top is served, not bound" \
  grep -qF "$TESTDIR/stack/p2 (on a proc mount" <<< "$(sed -n 's/^proc: //p' <<< "$stack_out")"

# A bind I cannot make as planned (the directory changed, a mount appeared
# below it: open_tree fails with EINVAL, injected here by strace in I's
# n-th call; R makes one call of its own, a probe, and strace counts per
# process): the daemon serves that directory, -v says so and the report's
# bound list leaves it out. A hole that cannot be made fails the run (125):
# a bind never stands without it. The calls in I: per bind, one for each of
# its holes, then one for the tree.
if command -v strace >/dev/null; then
  planned=$("$FSGATE_RUN" -v -- true 2>&1 | sed -n 's/^fsgate-run: hybrid view: [0-9]* host director[a-z]* bound read-only (\(.*\)); the daemon serves the rest.*/\1/p')
  # move_mount in I: one per bind (its tree), then one per hole of it
  read -r n_planned skip_when skip_dir hole_when hole_dir hole_move_when < <(python3 - "$planned" <<'PY'
import os, re, sys
calls, skip, hole, n = 0, None, None, 0
for m in re.finditer(r"(/[^ ()]*)(?: \(less ([^)]*)\))?", sys.argv[1]):
    path, holes = m.group(1), (m.group(2) or "").split(", ") if m.group(2) else []
    holes = [h for h in holes if os.path.isdir(h)]  # I clones only holes that exist
    if holes and hole is None:
        hole = (calls + 1, path, n + 2)
    calls += len(holes) + 1
    n += 1
    if not holes and skip is None and calls >= 2:
        skip = (calls, path)
print(n, *(skip or ("-", "-")), *(hole or ("-", "-", "-")))
PY
  )
  inject () { strace -f -qq -o /dev/null -e trace=open_tree -e inject=open_tree:error=EINVAL:when="$1" "${@:2}"; }
  if [ "$skip_when" != - ]; then
    out=$(inject "$skip_when" "$FSGATE_RUN" -v --json "$TESTDIR/skip.json" -- \
      sh -c 'mountpoint -q "$1" && echo bound || echo served' sh "$skip_dir" 2>&1); rc=$?
    is "a bind that fails as if $skip_dir changed since the plan: the run goes on, the daemon serves it" \
      "$rc/$(grep -x 'bound\|served' <<< "$out")" "0/served"
    check "... -v says so" grep -qF "hybrid view: $skip_dir changed since the plan: the daemon serves it" <<< "$out"
    is "... the report's bound list leaves it out" \
      "$(json_get "$TESTDIR/skip.json" "'$skip_dir' in r['hybrid']['bound'] or len(r['hybrid']['bound'])")" \
      "$((n_planned - 1))"
  else
    not_ok "the plan has a bind without holes to skip: $planned"
  fi
  if [ "$hole_when" != - ]; then
    out=$(inject "$hole_when" "$FSGATE_RUN" -- echo ran 2>&1); rc=$?
    is "the hole of $hole_dir cannot be made: the run is refused (125), the command never runs" \
      "$rc/$(grep -c '^ran$' <<< "$out")" "125/0"
    check "... naming the hybrid view, the directory and the fix" \
      grep -q "hybrid view.*, at $hole_dir: .*FSGATE_HYBRID=0" <<< "$out"
    # the bind of $hole_dir made, the hole's mount into it refused
    out=$(strace -f -qq -y -o "$TESTDIR/hole-move.log" -e trace=move_mount \
          -e inject=move_mount:error=EPERM:when="$hole_move_when" "$FSGATE_RUN" -- echo ran 2>&1); rc=$?
    is "the bind of $hole_dir stands but its hole cannot be mounted: 125, the command never runs" \
      "$rc/$(grep -c '^ran$' <<< "$out")/$(grep -c ", at $hole_dir: Operation not permitted" <<< "$out")" "125/0/1"
    # (the refused call is the hole's: its target, shown by -y, is the hole's place)
    check "... the refused move_mount was the hole's, into the bind" \
      grep -qE "move_mount\(.*, [0-9]+</tmp/root$hole_dir/[^>]*>, .*\(INJECTED\)" "$TESTDIR/hole-move.log"
  else
    not_ok "the plan has a bind with a hole: $planned"
  fi
else
  skip "a bind that cannot be made as planned is served" "strace"
fi

# What the view denies by identity, each as a case: TREE is a hybrid tree
# and bound without the deny rule (the positive control: the probe reads
# CONTENT through the bind); with deny-read DENY the view denies PROBE by
# identity, so TREE must be served, -v must say WHY, and PROBE is refused
# with the hybrid view on and off.
identity_case () { # LABEL TREE DENY PROBE CONTENT WHY
  local label=$1 tree=$2 deny=$3 probe=$4 content=$5 why=$6
  local p0=$TESTDIR/$label-0.ini p1=$TESTDIR/$label-1.ini
  printf '[policy]\nprofile = none\n[filesystem]\nreadonly = /\nhybrid-trees = %s\n' "$tree" > "$p0"
  cp "$p0" "$p1"
  printf 'deny-read = %s\n' "$deny" >> "$p1"
  check "$label: control: without the deny, $tree is bound" \
    grep -qF "[bound: $tree]" <<< "$("$FSGATE" explain --policy "$p0" "$probe")"
  is "$label: control: ... and $probe is readable" "$(run_fsg --policy "$p0" -C / -- cat "$probe" 2>&1)" "$content"
  check "$label: deny-read $deny: $tree is served, and -v says why" \
    grep -qF "$tree ($why" <<< "$("$FSGATE_RUN" --policy "$p1" -v -- true 2>&1)"
  for m in 1 0; do
    is "$label: FSGATE_HYBRID=$m: $probe is denied" \
      "$(FSGATE_HYBRID=$m run_fsg --policy "$p1" -C / -- sh -c "cat $probe >/dev/null 2>&1 || echo refused")" refused
  done
}

# Hard links out of a denied directory: the view denies the other name of a
# multiply-linked file below a literal deny-read directory, so nothing on
# that file system may be bound.
L=$TESTDIR/links
mkdir -p "$L/secret" "$L/tree/sub"
echo key > "$L/secret/k"
ln "$L/secret/k" "$L/tree/sub/k2"
identity_case links "$L/tree" "$L/secret" "$L/tree/sub/k2" key \
  "on the file system of denied '$L/secret', which holds 1 file with more than one link"

# A denied file's other name on an overlayfs with its layers on two file
# systems: the file reports the lower layer's st_dev, its directory the
# overlay's; only the super block says they are one file system.
O=$TESTDIR/ov
mkdir -p "$O/lower" "$O/upper" "$O/merged"
if mount -t tmpfs fsgate-test-lower "$O/lower" && mounted+=("$O/lower") &&
   mount -t tmpfs fsgate-test-upper "$O/upper" && mounted+=("$O/upper") &&
   mkdir -p "$O/lower/l/pub" "$O/upper/u" "$O/upper/w" &&
   echo secret > "$O/lower/l/s" && ln "$O/lower/l/s" "$O/lower/l/pub/s2" &&
   mkdir -p "$O/lower/l/sdir" "$O/lower/l/pub2" && echo dirsecret > "$O/lower/l/sdir/f" &&
   ln "$O/lower/l/sdir/f" "$O/lower/l/pub2/f" &&
   mount -t overlay fsgate-test-ov -o "lowerdir=$O/lower/l,upperdir=$O/upper/u,workdir=$O/upper/w" "$O/merged" &&
   mounted+=("$O/merged"); then
  check "overlay: control: the file and its directory report different devices" \
    test "$(stat -c %d "$O/merged/s")" != "$(stat -c %d "$O/merged/pub")"
  identity_case overlay "$O/merged/pub" "$O/merged/s" "$O/merged/pub/s2" secret \
    "on the file system of denied '$O/merged/s', which has 2 links"
  # a denied directory's file there: the scan of the directory must not
  # take the file's st_dev (the lower layer's) for another mount
  identity_case overlay-dir "$O/merged/pub2" "$O/merged/sdir" "$O/merged/pub2/f" dirsecret \
    "on the file system of denied '$O/merged/sdir', which holds 1 file with more than one link"
else
  not_ok "an overlayfs of two tmpfs could be mounted (the kernel has overlay: $(grep -cw overlay /proc/filesystems))"
fi

# A denied directory seen through another mount of its file system: the
# bind would show it, the view denies it by identity.
B=$TESTDIR/bm
mkdir -p "$B/real/secret" "$B/alias"
echo hidden > "$B/real/secret/f"
if mount --bind "$B/real" "$B/alias" && mounted+=("$B/alias"); then
  identity_case bindmount "$B/alias" "$B/real/secret" "$B/alias/secret/f" hidden \
    "denied '$B/real/secret' is reachable below it"
else
  not_ok "a bind mount could be made for the identity case"
fi

done_testing
