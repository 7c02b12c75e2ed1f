#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# fsgate-run inside real containers: rootful Podman with the runc runtime,
# a Debian image built from Debian packages (image.sh, cached), fsgate-run
# bind-mounted read-only from the build directory. Checks each row of
# docs/ci.md's Podman table: the minimal flags work, every other row fails
# (125) with a fix that names the missing flag, and a run's writes, denials,
# network refusal, timeout (124) and report are the same as on the host.
#
# Host quirks (docs/ci.md, "What the tests run"):
#  - crun refuses to start here ("cgroups in hybrid mode not supported"):
#    every run says --runtime runc;
#  - RLIMIT_NOFILE cannot be raised here, and Podman raises it by default:
#    a test-private containers.conf (CONTAINERS_CONF) sets default_ulimits = [];
#  - runs use --network none: no test traffic leaves the machine; it changes
#    nothing for fsgate-run, which refuses sockets itself.
set -u

. "$(dirname "$0")/../lib/tap.sh"

FSGATE_RUN=${FSGATE_RUN:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/runner/fsgate-run}
FSGATE_RUN=$(readlink -f "$FSGATE_RUN")
BUILDDIR=$(dirname "$(dirname "$FSGATE_RUN")")
HERE=$(cd "$(dirname "$0")" && pwd)
TAG=fsgate-test-$$

bail_or_skip () {
  if [ -n "${FSGATE_TESTS_MUST_RUN:-}" ]; then
    echo "Bail out! $1, and FSGATE_TESTS_MUST_RUN is set"
    exit 1
  fi
  echo "1..0 # SKIP $1"
  exit 0
}

[ "$(id -u)" -eq 0 ] || bail_or_skip "needs root (rootful podman)"
[ -c /dev/fuse ] || bail_or_skip "needs /dev/fuse on the host"
for tool in podman runc mmdebstrap; do
  command -v "$tool" >/dev/null || bail_or_skip "needs $tool (apt-get install podman runc mmdebstrap uidmap)"
done
"$FSGATE_RUN" --doctor >/dev/null 2>&1 || bail_or_skip "fsgate-run --doctor fails on the host"

TESTDIR=$(mktemp -d "${TMPDIR:-/tmp}/fsgate-container-test.XXXXXX")
chmod 0755 "$TESTDIR"
_cleanup () {
  local ids
  ids=$(podman ps -aq --filter "label=$TAG" 2>/dev/null)
  [ -n "$ids" ] && podman rm -f $ids >/dev/null 2>&1
  # rootless Podman's containers, in nobody's storage
  if [ -n "${RLHOME:-}" ] && [ -d "$RLHOME" ] && declare -F rl >/dev/null; then
    rl podman rm -af --filter "label=$TAG" >/dev/null 2>&1
  fi
  # rootless Podman's pause process, which keeps its user namespace
  if [ -n "${RLRUN:-}" ] && [ -s "$RLRUN/libpod/tmp/pause.pid" ]; then
    kill -KILL "$(cat "$RLRUN/libpod/tmp/pause.pid")" 2>/dev/null
    rm -f "$RLRUN/libpod/tmp/pause.pid"
  fi
  rm -rf "$TESTDIR"
}
trap _cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE # the EXIT trap cleans up then too

export CONTAINERS_CONF=$TESTDIR/containers.conf
cat > "$CONTAINERS_CONF" <<'EOF'
[containers]
# RLIMIT_NOFILE cannot be raised on this machine; podman's default would.
default_ulimits = []
[engine]
# no systemd here (rootless Podman waits for its D-Bus otherwise)
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF

image_err=$TESTDIR/image.err
IMAGE=$("$HERE/image.sh" 2>"$image_err")
rc=$?
if [ $rc -eq 77 ]; then
  bail_or_skip "$(tail -n 1 "$image_err")"
elif [ $rc -ne 0 ] || [ -z "$IMAGE" ]; then
  echo "Bail out! building the test image failed: $(tail -n 5 "$image_err" | tr '\n' ' ')"
  exit 1
fi
diag "image $IMAGE"

WS=$TESTDIR/ws
mkdir -m 0755 "$WS"

# prun [PODMAN FLAGS...] -- COMMAND...: one container, removed afterwards; the
# build directory read-only and the test directory at their host paths.
prun () {
  local flags=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
  shift
  timeout -k 10 120 podman run --rm --runtime runc --network none --label "$TAG" \
    -v "$BUILDDIR:$BUILDDIR:ro" -v "$TESTDIR:$TESTDIR" -w "$WS" "${flags[@]}" "$IMAGE" "$@"
}

# row DESC FLAGS...: fsgate-run -- true under FLAGS; sets $out and $rc.
row () {
  local d=$1; shift
  out=$(prun "$@" -- "$FSGATE_RUN" -- sh -c 'echo ran > row.txt' 2>&1)
  rc=$?
}

expect_fail () {
  local d=$1 want=$2
  is "$d: exit 125" "$rc" 125
  if printf '%s' "$out" | grep -qF -- "$want"; then ok "$d: the fix names $want"; else
    not_ok "$d: the fix names $want"; diag "$out"; fi
}

# ---- The rows of docs/ci.md's Podman table ----------------------------------

row "no flags"
expect_fail "no flags" "--device /dev/fuse"

rm -f "$WS/row.txt"
row "--device /dev/fuse" --device /dev/fuse
is "--device /dev/fuse (the minimal flags): the command ran" "$rc:$(cat "$WS/row.txt" 2>/dev/null)" "0:ran"
is "--device /dev/fuse: one warning says the run got the container's /proc" \
  "$(printf '%s\n' "$out" | grep -c "warning: a fresh /proc cannot be mounted")" 1

out=$(prun --device /dev/fuse -- "$FSGATE_RUN" --doctor 2>&1); rc=$?
is "--device /dev/fuse: --doctor passes" "$rc" 0
check "--device /dev/fuse: --doctor has a warn line for /proc" \
  grep -q "^warn  /proc: a fresh /proc is refused" <<<"$out"

out=$(prun --device /dev/fuse -- "$FSGATE_RUN" --no-proc-fallback -- true 2>&1); rc=$?
expect_fail "--device /dev/fuse, fsgate-run --no-proc-fallback" "--security-opt unmask=ALL"
out=$(prun --device /dev/fuse -- "$FSGATE_RUN" --doctor --no-proc-fallback 2>&1); rc=$?
is "--no-proc-fallback: --doctor fails" "$rc" 125

rm -f "$WS/row.txt"
row "unconfined" --device /dev/fuse --cap-add SYS_ADMIN --security-opt seccomp=unconfined \
  --security-opt apparmor=unconfined
is "--device /dev/fuse + SYS_ADMIN + seccomp/apparmor unconfined: runs (container's /proc)" \
  "$rc:$(cat "$WS/row.txt" 2>/dev/null)" "0:ran"

rm -f "$WS/row.txt"
row "unmask" --device /dev/fuse --security-opt unmask=ALL
is "--device /dev/fuse --security-opt unmask=ALL: runs" "$rc:$(cat "$WS/row.txt" 2>/dev/null)" "0:ran"
is "unmask=ALL: no /proc warning (a fresh /proc)" "$(printf '%s' "$out" | grep -c 'fresh /proc')" 0

rm -f "$WS/row.txt"
row "read-only root" --device /dev/fuse --read-only
is "--device /dev/fuse --read-only: runs" "$rc:$(cat "$WS/row.txt" 2>/dev/null)" "0:ran"

row "user 1000" --device /dev/fuse --user 1000:1000
expect_fail "--device /dev/fuse --user 1000:1000 (device mode $(stat -c %a /dev/fuse))" \
  "--device /dev/fuse:/dev/fuse:rwm"
check "--user 1000:1000: the fix names a group or the mode, not modprobe" \
  sh -c 'printf "%s" "$1" | grep -q -- "--group-add" && printf "%s" "$1" | grep -q "chmod 0666" && ! printf "%s" "$1" | grep -q modprobe' _ "$out"

row "bind-mounted /dev/fuse" -v /dev/fuse:/dev/fuse
expect_fail "-v /dev/fuse:/dev/fuse (no --device)" "--device /dev/fuse:/dev/fuse:rwm"

# Docker's default seccomp profile, as far as fsgate-run is concerned: unshare,
# setns, clone with namespace flags, clone3, mount, umount2 and the new mount
# API are allowed only with CAP_SYS_ADMIN, and pivot_root is not in it at all
# (checked here once with moby's profiles/seccomp/default.json in Podman: the
# same two failures). strict-seccomp.json refuses the first group,
# strict-seccomp-sysadmin.json only pivot_root.
row "strict seccomp" --device /dev/fuse --security-opt "seccomp=$HERE/strict-seccomp.json"
expect_fail "--device /dev/fuse with a seccomp profile refusing namespaces and mount (Docker's default without SYS_ADMIN)" \
  "--security-opt seccomp=unconfined"
row "strict seccomp, SYS_ADMIN" --device /dev/fuse --cap-add SYS_ADMIN \
  --security-opt "seccomp=$HERE/strict-seccomp-sysadmin.json"
expect_fail "--device /dev/fuse --cap-add SYS_ADMIN with a seccomp profile without pivot_root (Docker's default with SYS_ADMIN)" \
  "--security-opt seccomp=unconfined"
check "... and says that SYS_ADMIN does not help" grep -q "pivot_root is refused.*even with --cap-add SYS_ADMIN" <<<"$out"
out=$(prun --device /dev/fuse --cap-add SYS_ADMIN --security-opt "seccomp=$HERE/strict-seccomp-sysadmin.json" \
  -- "$FSGATE_RUN" --doctor 2>&1); rc=$?
is "... --doctor fails there" "$rc" 125
check "... on pivot_root" grep -q "^FAIL  pivot_root in a new mount namespace: Operation not permitted" <<<"$out"

# A non-root user once the device is usable (root opens it up in the
# container), in a workspace of its own (the kernel refuses writes to inodes
# of owners unmapped in the sandbox's user namespace: docs/security.md).
mkdir "$WS/u" && chown 1000:1000 "$WS/u"
out=$(prun --device /dev/fuse -- sh -c 'chmod 0666 /dev/fuse && exec setpriv --reuid=1000 --regid=1000 --clear-groups "$@"' _ \
  "$FSGATE_RUN" -C "$WS/u" -- sh -c 'echo mine > u.txt' 2>&1); rc=$?
is "--device /dev/fuse, mode 0666, uid 1000: runs and writes as 1000" \
  "$rc:$(stat -c %u "$WS/u/u.txt" 2>/dev/null)" "0:1000" || diag "$out"

# ---- The same run on the host and in the container --------------------------

cat > "$WS/work.sh" <<'EOF'
echo written > out.txt
git -C repo add new.txt && git -C repo -c user.name=t -c user.email=t@example.org commit -qm new \
  && git -C repo log --format=%s && git -C repo status --porcelain
tar -cf repo.tar -C repo new.txt && tar -tf repo.tar
cat secret.txt 2>/dev/null && echo "secret read" || echo "secret denied"
python3 -c '
import socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    print("net allowed")
except OSError as e:
    print("net refused", e.errno)
'
exit 3
EOF
echo "top secret" > "$WS/secret.txt"

# The parts of a report that must agree: how the run ended, the denials in
# the workspace and of the network, the policy's rules.
summary () {
  python3 - "$1" "$WS" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
ws = sys.argv[2]
den = sorted((d["source"], d["operation"], d["path"], d["errno"]) for d in r["denials"]
             if d["source"] == "seccomp" or d["path"].startswith(ws))
print(json.dumps({k: r[k] for k in ("exit_code", "signal", "timed_out", "reason", "sandbox_denied",
                                    "seccomp_notify", "stdout")}, sort_keys=True))
print(den)
print(sorted((x["kind"], x["pattern"]) for x in r["policy"]["rules"]))
EOF
}

workload () { # WHERE: host or container; prints status, output, report summary
  local where=$1 rep=$TESTDIR/report-$1.json
  rm -rf "$WS/out.txt" "$WS/repo" "$WS/repo.tar" "$rep"
  # a real repository, made outside the sandbox, for git to commit to inside
  git init -q "$WS/repo" && echo new > "$WS/repo/new.txt"
  git -C "$WS/repo" -c user.name=t -c user.email=t@example.org commit -q --allow-empty -m first
  local cmd=("$FSGATE_RUN" --json "$rep" --capture --profile read-only --rw "$WS"
             --deny-read "$WS/secret.txt" -C "$WS" -- sh work.sh)
  if [ "$where" = host ]; then
    (cd "$WS" && PATH=/usr/bin:/bin timeout -k 10 120 "${cmd[@]}" >"$TESTDIR/out-$where" 2>/dev/null)
  else
    prun --device /dev/fuse -- "${cmd[@]}" >"$TESTDIR/out-$where" 2>/dev/null
  fi
  echo "status $?"
  cat "$TESTDIR/out-$where"
  echo "file $(cat "$WS/out.txt" 2>/dev/null)"
  echo "commits $(git -C "$WS/repo" log --format=%s | tr '\n' ' ')"
  [ -s "$rep" ] && summary "$rep"
}

host=$(workload host)
cont=$(workload container)
is "workload: status, output, written file and report agree with the host" "$cont" "$host"
check "workload: the host run itself wrote, was denied and refused the network" \
  grep -q "^net refused 13" <<<"$host"
diag "$host"
check "workload: the container's report says which /proc it got" \
  grep -q '"proc" : "container"' "$TESTDIR/report-container.json"
check "workload: the host's report says it got a fresh /proc" \
  grep -q '"proc" : "fresh"' "$TESTDIR/report-host.json"

tm () { # WHERE
  local rep=$TESTDIR/timeout-$1.json
  if [ "$1" = host ]; then
    (cd "$WS" && timeout -k 10 60 "$FSGATE_RUN" --json "$rep" --timeout 1s -- sleep 30 2>/dev/null)
  else
    prun --device /dev/fuse -- "$FSGATE_RUN" --json "$rep" --timeout 1s -- sleep 30 2>/dev/null
  fi
  echo "$? $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["reason"], r["timed_out"])' "$rep")"
}
is "timeout: 124 in the container as on the host" "$(tm container)" "$(tm host)"
is "timeout: 124 and the report says so" "$(tm host)" "124 timeout True"

# ---- What the container's /proc lets the command reach ----------------------

# A process of the container outside the sandbox, same uid: the command can
# list it but not read its environment, files or root, nor signal it.
out=$(prun --device /dev/fuse -e FSGATE_TEST_SECRET=s3cr3t -- sh -c '
  sleep 1000 & sp=$!
  until [ "$(cat /proc/$sp/comm 2>/dev/null)" = sleep ]; do :; done # its exec is done
  outside=$(tr "\0" "\n" < /proc/$sp/environ | grep -c FSGATE_TEST_SECRET; ls /proc/$sp/root/ | grep -c "^etc$")
  echo "outside $outside" | tr "\n" " "; echo
  "$0" -- sh -c "
    ls -d /proc/$sp >/dev/null 2>&1 && echo listed
    tr \"\\0\" \"\\n\" < /proc/$sp/environ 2>/dev/null | grep -c FSGATE_TEST_SECRET || echo environ refused
    ls /proc/$sp/root/ >/dev/null 2>&1 && echo root read || echo root refused
    readlink /proc/$sp/cwd >/dev/null 2>&1 && echo cwd read || echo cwd refused
    cat /proc/$sp/mem >/dev/null 2>&1 && echo mem read || echo mem refused
    kill -0 $sp 2>/dev/null && echo signalled || echo no signal"
  kill $sp' "$FSGATE_RUN" 2>/dev/null)
is "container's /proc: positive control, the same reads work outside the sandbox" \
  "$(printf '%s\n' "$out" | head -n 1)" "outside 1 1 "
is "container's /proc: the command lists the process but cannot reach it" \
  "$(printf '%s\n' "$out" | tail -n +2 | tr '\n' ' ')" \
  "listed 0 environ refused root refused cwd refused mem refused no signal "

# Writes: oom_score_adj, clear_refs and friends are checked only against the
# owner's uid, so the Landlock domain must refuse them (and every write under
# /proc); the mount table of a container process stays readable (documented).
# Positive control: the same writes from the container's shell.
out=$(prun --device /dev/fuse -- sh -c '
  sleep 1000 & sp=$!
  until [ "$(cat /proc/$sp/comm 2>/dev/null)" = sleep ]; do :; done
  printf outside
  for f in oom_adj:8 oom_score_adj:500 autogroup:5 coredump_filter:0x33 clear_refs:1 sched:0; do
    { echo ${f#*:} > /proc/$sp/${f%%:*}; } 2>/dev/null && printf " %s" ${f%%:*}
  done; echo
  "$0" --json "$1/r-writes.json" -- sh -c "
    printf inside
    for f in oom_adj:9 oom_score_adj:600 autogroup:6 coredump_filter:0x23 clear_refs:1 sched:0; do
      { echo \${f#*:} > /proc/$sp/\${f%%:*}; } 2>/dev/null && printf \" %s\" \${f%%:*}
    done
    n=0; for p in \$(ls /proc | grep -E \"^[0-9]+\$\"); do { echo 900 > /proc/\$p/oom_score_adj; } 2>/dev/null && n=\$((n+1)); done
    echo \" any=\$n\""
  echo "after $(cat /proc/$sp/oom_score_adj)"
  kill $sp' "$FSGATE_RUN" "$TESTDIR" 2>/dev/null)
is "container's /proc writes: positive control, they work from the container's shell" \
  "$(printf '%s\n' "$out" | head -n 1)" "outside oom_adj oom_score_adj autogroup coredump_filter clear_refs sched"
is "container's /proc writes: the command can write none, to no process" \
  "$(printf '%s\n' "$out" | sed -n 2p)" "inside any=0"
is "... the outside process keeps its value" "$(printf '%s\n' "$out" | sed -n 3p)" "after 500"
is "... the report says proc = container, landlock = true" \
  "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["proc"], d["landlock"])' "$TESTDIR/r-writes.json")" \
  "container True"

# No Landlock, no fallback: a seccomp profile refusing landlock_create_ruleset.
out=$(prun --device /dev/fuse --security-opt "seccomp=$HERE/no-landlock-seccomp.json" \
  -- "$FSGATE_RUN" -- true 2>&1); rc=$?
expect_fail "--device /dev/fuse with a seccomp profile refusing Landlock" "landlock_create_ruleset"
check "... and says the fallback needs Landlock" grep -q "needs a Landlock domain" <<<"$out"

# ---- Rootless Podman ----------------------------------------------------------

# As nobody (uid 65534). Without a range in /etc/subuid, Podman maps that
# one uid, so its storage needs ignore_chown_errors (the image has files of
# other owners); cached beside the image. The host's /dev/fuse is
# 0600: as test-run-env does for its unprivileged run, a private mount
# namespace shows a 0666 node of the same device there (on Debian and Ubuntu
# hosts udev makes it 0666).
key=${IMAGE##*:}
tar=${FSGATE_TEST_CACHE:-/var/cache/fsgate-tests}/debian-$key.tar
# Podman's database remembers the runtime directory it was created with, so
# that one is cached too (and its pause process is found through it).
RLBASE=${FSGATE_TEST_CACHE:-/var/cache/fsgate-tests}/rootless-$key
RLHOME=$RLBASE/home
RLRUN=$RLBASE/run
RLWS=$TESTDIR/rootless-ws
mkdir -p "$RLHOME/.config/containers" "$RLRUN" "$RLWS" "$TESTDIR/devfuse"
printf '[storage]\ndriver = "overlay"\n[storage.options.overlay]\nignore_chown_errors = "true"\n' \
  > "$RLHOME/.config/containers/storage.conf"
chown -R 65534:65534 "$RLHOME" "$RLRUN" "$RLWS"
chmod 0700 "$RLRUN"
install -m 0755 "$FSGATE_RUN" "$TESTDIR/fsgate-run" # the build directory may be closed to nobody

rl () { # COMMAND...: as nobody, with a usable /dev/fuse
  timeout -k 10 180 unshare -m --propagation private sh -c '
    t=$1 ws=$2 home=$3 run=$4; shift 4
    mount -t tmpfs fsgate-test "$t/devfuse" && mknod -m 666 "$t/devfuse/fuse" c 10 229 \
      && mount --bind "$t/devfuse/fuse" /dev/fuse && cd "$ws" \
      && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
           env HOME="$home" XDG_RUNTIME_DIR="$run" CONTAINERS_CONF="$CONTAINERS_CONF" "$@"' \
    sh "$TESTDIR" "$RLWS" "$RLHOME" "$RLRUN" "$@"
}
rlrow () { # PODMAN FLAGS...: fsgate-run in a rootless container; sets $out and $rc
  rm -f "$RLWS/rl.txt"
  out=$(rl podman run --rm --runtime runc --network none --label "$TAG" "$@" \
        -v "$TESTDIR/fsgate-run:/usr/local/bin/fsgate-run:ro" -v "$RLWS:$RLWS" -w "$RLWS" "$IMAGE" \
        fsgate-run -- sh -c 'echo rootless > rl.txt' 2>&1)
  rc=$?
}

if ! command -v setpriv >/dev/null || ! command -v unshare >/dev/null; then
  skip "rootless Podman" "setpriv and unshare (util-linux)"
elif ! rl podman image exists "$IMAGE" 2>/dev/null && ! rl podman import --quiet "$tar" "$IMAGE" >/dev/null 2>"$TESTDIR/rl.err"; then
  not_ok "rootless Podman: importing the image"; diag "$(tail -n 3 "$TESTDIR/rl.err")"
else
  # One row only: each rootless run here takes about 20 s, Podman waiting
  # out conmon's exit timeout (no systemd; seen with any command). The rows
  # "no flags" (125, fix names --device /dev/fuse) and "unmask=ALL" (a fresh
  # /proc) behave as in the rootful table (run by hand).
  rlrow --device /dev/fuse
  is "rootless, --device /dev/fuse: runs, the file is nobody's on the host" \
    "$rc:$(cat "$RLWS/rl.txt" 2>/dev/null):$(stat -c %u "$RLWS/rl.txt" 2>/dev/null)" "0:rootless:65534" \
    || diag "$out"
  is "... with the /proc warning" "$(printf '%s\n' "$out" | grep -c "warning: a fresh /proc cannot be mounted")" 1
fi

done_testing
