#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The hybrid view decides exactly as the pure view. For generated trees and
# rule sets (hybrid-gen.py: literal, glob, recursive and floating deny-read
# and deny-write rules, nested roots, a hard link to a denied file), the
# same probe (lstat, read, write, a new name) runs through fsgate-run with
# FSGATE_HYBRID=1 and FSGATE_HYBRID=0 and must print the same; both must
# agree with `fsgate explain`; the directories explain marks [bound: DIR]
# must be mount points inside the sandbox, and some must be (else the test
# compares nothing).
export TMPDIR=/var/tmp # fsgate-run binds nothing below its private /tmp
GEN="$(cd "$(dirname "$0")" && pwd)/hybrid-gen.py"
. "$(dirname "$0")/../run/libtest.sh"
require_fsgate

FSGATE=${FSGATE:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/fsgate/fsgate}
SEEDS=${HYBRID_SEEDS:-12}
# bind every uniform tree (the default binds only the first 16, system
# trees first), so that the generated trees are bound too
export FSGATE_HYBRID_MAX=100000
# the hybrid view is opt-in; this suite turns it on (and off where it says so)
export FSGATE_HYBRID=1

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
check "FSGATE_HYBRID unset (the default): /usr is served by the daemon" bash -c "! grep -qx /usr <<< '$out'"
out=$(run_fsg -- sh -c 'grep " /usr " /proc/self/mountinfo' 2>/dev/null)
check "the bind of /usr is read-only, nosuid, nodev" grep -q ' ro,nosuid,nodev' <<< "$out"
out=$(run_fsg -v -- true 2>&1)
check "fsgate-run -v names what is bound" grep -q 'hybrid view: .* bound read-only (.*/usr' <<< "$out"
out=$("$FSGATE_RUN" --doctor 2>&1)
check "fsgate-run --doctor names what is bound" grep -q '^info  hybrid view: .* bound read-only (.*/usr' <<< "$out"
out=$(FSGATE_HYBRID_MAX=1 run_fsg -v -- sh -c 'grep -c . /proc/self/mountinfo' 2>&1)
check "FSGATE_HYBRID_MAX=1: 1 tree bound, the rest served" grep -q 'hybrid view: 1 host directory bound read-only (/[^ )]*).* more uniform directories served beyond the first 1 binds' <<< "$out"

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
  grep -q 'hybrid view off: open_tree() is refused here' <<< "$out"
is "... and the command sees no bind" "$(grep -v '^fsgate-run' <<< "$out")" "0
view-ok"

done_testing
