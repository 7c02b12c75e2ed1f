#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Day-one behaviour of the defaults (issue 12): a private, writable /tmp
# also when the working directory is below /tmp (roots below /tmp on top of
# it), `fsgate explain` agreeing with what the command gets for /tmp, /dev,
# /proc and /sys, the denial summary on stderr (--quiet), the resolver file
# with --net when /etc/resolv.conf points into /run, installed profiles that
# work when copied, `fsgate mount --audit-log -`, --help of mount/explain,
# and no stray byte under a terminal.
. "$(dirname "$0")/libtest.sh"
require_fsgate

FSGATE=${FSGATE:-${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/fsgate/fsgate}

# --- /tmp: private and writable, with the working directory below it ----------------
TMPWORK=$(mktemp -d /tmp/fsgate-defaults-cwd.XXXXXX)
OTHER=$(mktemp -d /tmp/fsgate-defaults-other.XXXXXX)
trap 'rm -rf "$TMPWORK" "$OTHER"; _cleanup' EXIT
echo host-file > "$OTHER/file"
out=$(cd "$TMPWORK" && run_fsg -- sh -c "
  echo private > /tmp/t.$MARK && cat /tmp/t.$MARK
  f=\$(mktemp) && echo mktemp-ok > \"\$f\" && cat \"\$f\"
  echo kept > here.txt
  cat '$OTHER/file' 2>/dev/null || echo other-hidden" 2>&1)
is "cwd under /tmp: /tmp is writable (mktemp works), the cwd too, the host's other /tmp files are not shown" \
  "$out" "private
mktemp-ok
other-hidden"
is "... what the command wrote in the cwd is on the host" "$(cat "$TMPWORK/here.txt" 2>&1)" "kept"
check "... what it wrote in /tmp is not" test ! -e "/tmp/t.$MARK"
out=$(cd "$TMPWORK" && printf 'int main(void){return 0;}\n' > m.c && run_fsg -- gcc -o m m.c 2>&1 && echo built)
is "... gcc (temporary files in /tmp) builds in a cwd under /tmp" "$out" "built"
out=$(run_fsg --rw "$OTHER" -- sh -c "cat '$OTHER/file'; echo x > /tmp/y && echo tmp-ok")
is "a --rw root below /tmp is shown on top of the private /tmp" "$out" "host-file
tmp-ok"

# --- secret names everywhere but the public system trees -------------------------------------
# Another user's home, a service's keys under /var/lib, and `sudo fsgate-run` from a project in
# one's home (HOME=/root): denied, each read natively first (the positive control).
mkdir -p /home
UHOME=$(mktemp -d /home/fsgate-defaults-home.XXXXXX)
SRVDIR=$(mktemp -d /var/lib/fsgate-defaults-srv.XXXXXX)
trap 'rm -rf "$TMPWORK" "$OTHER" "$UHOME" "$SRVDIR"; _cleanup' EXIT
mkdir -p "$UHOME/.ssh" "$UHOME/proj/src" "$SRVDIR/pki"
echo ssh-key > "$UHOME/.ssh/id_ed25519"
echo HOME_ENV=1 > "$UHOME/.env"
echo PROJ_ENV=1 > "$UHOME/proj/.env"
echo server-key > "$SRVDIR/pki/server.key"
echo code > "$UHOME/proj/src/main.c"
secrets="../.ssh/id_ed25519 ../.env .env $SRVDIR/pki/server.key"
native=$(cd "$UHOME/proj" && cat $secrets | wc -l)
is "positive control: the secrets are readable natively" "$native" "4"
for profile in workspace-write read-only; do
  out=$(cd "$UHOME/proj" && HOME=/root run_fsg --profile $profile -- sh -c '
    for f in "$@"; do cat "$f" >/dev/null 2>&1 && echo "read $f"; done; cat src/main.c' sh $secrets 2>&1)
  is "$profile, HOME=/root: ../.ssh/id_ed25519, ../.env, the cwd's .env and /var/lib/.../server.key denied" \
    "$out" "code"
done
out=$(cd "$UHOME/proj" && run_fsg --profile read-only -- cat .env 2>&1)
check "read-only profile: the working directory's .env is denied ($out)" \
  grep -q "Permission denied" <<<"$out"

# A directory holding a secret cannot be renamed into a package tree (where secret-names do not
# apply, so the key would become readable): EXDEV. Controls: natively the rename works, and
# through fsgate-run a rename to another name works.
mkdir -p "$UHOME/proj/conf"; echo server-key > "$UHOME/proj/conf/server.key"
renames='
import os, sys
for d in sys.argv[1:]:
    try:
        os.rename("conf", d); os.rename(d, "conf"); print(d, "ok")
    except OSError as e:
        print(d, os.strerror(e.errno))'
out=$(cd "$UHOME/proj" && python3 -c "$renames" node_modules)
is "positive control: natively, conf/ (with server.key) can be renamed to node_modules" "$out" "node_modules ok"
out=$(cd "$UHOME/proj" && run_fsg -- python3 -c "$renames" node_modules site-packages node_modules2 2>&1)
is "through fsgate-run: into node_modules or site-packages EXDEV, to node_modules2 it works" "$out" \
  "node_modules Invalid cross-device link
site-packages Invalid cross-device link
node_modules2 ok"
rm -rf "$UHOME/proj/conf"

# --- fsgate explain says what fsgate-run gives -------------------------------------------------
# classify PATH inside: absent, deny (exists, unreadable), rw or ro
places="/tmp /tmp/sub /dev /dev/null /dev/shm /dev/sda /proc /sys /sys/kernel"
inside=$(run_fsg -- sh -c 'mkdir -p /tmp/sub; for p in "$@"; do
    if [ ! -e "$p" ]; then echo absent
    elif [ -d "$p" ] && ! ls "$p" >/dev/null 2>&1; then echo deny
    elif [ -w "$p" ]; then echo rw
    else echo ro; fi
  done' sh $places | tr '\n' ' ')
explained=$("$FSGATE" explain $places | awk '{print $1}' | tr '\n' ' ')
is "fsgate explain agrees with fsgate-run for /tmp, /dev, /proc, /sys" "$explained" "$inside"
out=$("$FSGATE" explain /tmp/x /dev/null /proc/self/status)
check "... and names fsgate-run's places (tmp (private), dev, proc)" \
  bash -c 'grep -q "^rw .*/tmp/x  tmp (private)" <<<"$1" && grep -q "/dev/null  dev:" <<<"$1" && grep -q "/proc/self/status  proc:" <<<"$1"' _ "$out"
out=$("$FSGATE" explain --mount /tmp/x)
check "explain --mount explains the policy alone" bash -c '! grep -q "tmp (private)" <<<"$1"' _ "$out"

# --- the denial summary ----------------------------------------------------------------------
echo secret > "$WORK/.env"
err=$("$FSGATE_RUN" -- cat .env 2>&1 >/dev/null)
check "a run with a denial prints a summary on stderr: operation, path, rule, command" \
  grep -Eq "^  [a-z]+ $WORK/\.env: deny-read .*/\*\*/\.env \(profile workspace-write\) \[cat\]$" <<<"$err"
check "... headed by the count (singular)" grep -q "^fsgate-run: 1 access denied by the sandbox:$" <<<"$err"
err=$("$FSGATE_RUN" --quiet -- cat .env 2>&1 >/dev/null)
is "--quiet silences it (the command's own message stays)" "$err" "cat: .env: Permission denied"
err=$("$FSGATE_RUN" -- true 2>&1)
is "no denial, no summary" "$err" ""
for i in $(seq 8); do echo s > "$WORK/k$i.key"; done
err=$("$FSGATE_RUN" -- sh -c 'for i in 1 2 3 4 5 6 7 8; do cat k$i.key; done 2>/dev/null' 2>&1)
check "many denials: at most 5 lines ($(wc -l <<<"$err"))" test "$(wc -l <<<"$err")" -le 5
check "... the last says how many more and where to see them" grep -Eq "^  \.\.\. and [0-9]+ more; rerun with --json FILE" <<<"$err"
err=$("$FSGATE_RUN" --json "$TESTDIR/s.json" -- sh -c 'for i in 1 2 3 4 5 6 7 8; do cat k$i.key; done 2>/dev/null' 2>&1)
check "... with --json, the report" grep -q "the report $TESTDIR/s.json lists them" <<<"$err"
is "... which has them all" "$(json_get "$TESTDIR/s.json" 'r["denials_total"] >= 8')" "True"
rm -f "$WORK"/k*.key "$WORK/.env"
err=$("$FSGATE_RUN" -- "$TRY_SYSCALL" socket-inet 2>&1 >/dev/null)
check "a refused socket: the summary names the family and the rule" \
  grep -q "^  socket AF_INET: network denied" <<<"$err"
# names chosen by the command cannot drive the terminal: C1 CSI (U+009B), RLO (U+202E), a
# zero-width space, invalid UTF-8, and lines long enough to be cut inside a 3-byte character
csi=$'\xc2\x9b'; rlo=$'\xe2\x80\xae'; zw=$'\xe2\x80\x8b'; bad=$'\xff'
euros=$(printf '\xe2\x82\xac%.0s' $(seq 80))
names=("x${csi}31m${rlo}${zw}${bad}.key" "$euros.key" "a$euros.key" "aa$euros.key")
mkdir -p "$WORK/esc/$euros/$euros"
for n in "${names[@]}"; do echo s > "$WORK/esc/$euros/$euros/$n"; done
err=$(cd "$WORK/esc/$euros/$euros" && "$FSGATE_RUN" -- sh -c 'for f in "$@"; do cat "$f"; done 2>/dev/null' sh "${names[@]}" 2>&1 >/dev/null)
check "positive control: the denials are in the summary (${#err} bytes)" \
  grep -q "^fsgate-run: 4 accesses denied by the sandbox:" <<<"$err"
is "the summary is valid UTF-8 without control or format characters, lines <= 300 characters" \
  "$(printf '%s' "$err" | python3 -c '
import sys, unicodedata
t = sys.stdin.buffer.read().decode("utf-8")
print([(i, hex(ord(c))) for i, c in enumerate(t) if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")],
      max(len(l) for l in t.splitlines()) <= 302, t.count("...") >= 3)' 2>&1)" "[] True True"
rm -rf "$WORK/esc"
err=$("$FSGATE_RUN" -v -- "$TRY_SYSCALL" socket-inet 2>&1 >/dev/null)
check "-v: '1 denial', not '1 denials'" bash -c 'grep -q ", 1 denial$" <<<"$1"' _ "$err"

# --- a denied working directory: the fix offered is possible ------------------------------------
mkdir -p "$WORK/sec"
err=$(cd "$WORK/sec" && run_fsg --deny-read "$WORK/sec" -- true 2>&1); rc=$?
is "a denied working directory: 125" "$rc" "125"
check "... the message says no --ro/--rw can reopen it and offers -C" \
  bash -c 'grep -q "no --ro/--rw can reopen a denied path" <<<"$1" && grep -q -- "-C DIR" <<<"$1" && ! grep -q "add it with --ro" <<<"$1"' _ "$err"
err=$(cd "$WORK" && run_fsg --profile none --ro /usr -- true 2>&1)
check "an absent working directory: add it with --ro/--rw" grep -q "add it with --ro DIR or --rw DIR" <<<"$err"

# --- DNS with --net when /etc/resolv.conf points into /run --------------------------------------
# A test root: in a private mount namespace, a copy of /etc whose
# resolv.conf is a symlink into /run (as systemd-resolved sets it up), and
# a tmpfs on /run holding the stub file.
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$TESTDIR/etc" "$TESTDIR/runfs"
  cp -a /etc/. "$TESTDIR/etc/" 2>/dev/null
  rm -f "$TESTDIR/etc/resolv.conf"
  ln -s ../run/systemd/resolve/stub-resolv.conf "$TESTDIR/etc/resolv.conf"
  resolv="nameserver 127.0.0.53
options edns0 trust-ad # fsgate-test $MARK"
  inns () {
    unshare -m --propagation private sh -c '
      mount --bind "$1/etc" /etc && mount -t tmpfs fsgate-test /run &&
      mkdir -p /run/systemd/resolve && printf "%s\n" "$2" > /run/systemd/resolve/stub-resolv.conf &&
      mkdir /run/other && echo daemon > /run/other/sock-standin && shift 2 && exec "$@"' sh "$TESTDIR" "$resolv" "$@"
  }
  native=$(inns cat /etc/resolv.conf)
  is "(the test root: natively, /etc/resolv.conf resolves into /run)" "$native" "$resolv"
  out=$(inns timeout 60 "$FSGATE_RUN" --quiet --net -- sh -c 'cat /etc/resolv.conf; cat /run/other/sock-standin 2>&1 || true; echo x > /run/systemd/resolve/stub-resolv.conf 2>/dev/null || echo read-only')
  is "--net: the resolver file is readable through the symlink, nothing else of /run, read-only" "$out" "$resolv
cat: /run/other/sock-standin: No such file or directory
read-only"
  out=$(inns timeout 60 "$FSGATE_RUN" --quiet -- sh -c 'cat /etc/resolv.conf >/dev/null 2>&1 && echo readable || echo denied')
  is "... without --net it stays denied" "$out" "denied"
  out=$(inns "$FSGATE" explain --net /run/systemd/resolve/stub-resolv.conf /run/other)
  check "... and fsgate explain --net says so" \
    bash -c 'grep -q "^ro .*stub-resolv.conf  resolver:" <<<"$1" && grep -q "^absent .*/run/other  run:" <<<"$1"' _ "$out"
  # Attacks: a resolv.conf (or the file it names) leading into a denied directory shows nothing
  # of it. The key is in a denied ~/.ssh (HOME=$UHOME for the run).
  key=$(cat "$UHOME/.ssh/id_ed25519")
  attack () { # LINK-TARGET [STUB-LINK] -- what the command sees with --net
    rm -f "$TESTDIR/etc/resolv.conf"; ln -s "$1" "$TESTDIR/etc/resolv.conf"
    inns sh -c 'if [ -n "$1" ]; then rm -f /run/systemd/resolve/stub-resolv.conf; ln -s "$1" /run/systemd/resolve/stub-resolv.conf; fi; shift; exec "$@"' \
      sh "$2" "${@:3}"
  }
  native=$(attack "$UHOME/.ssh/id_ed25519" "" cat /etc/resolv.conf)
  is "positive control: natively, a resolv.conf symlink into ~/.ssh reads the key" "$native" "$key"
  out=$(attack "$UHOME/.ssh/id_ed25519" "" env HOME="$UHOME" timeout 60 "$FSGATE_RUN" --quiet --net -- \
    sh -c 'cat /etc/resolv.conf 2>/dev/null || echo refused')
  is "--net: resolv.conf -> ~/.ssh/id_ed25519 is not bound (HOME=\$UHOME)" "$out" "refused"
  native=$(attack ../run/systemd/resolve/stub-resolv.conf "$UHOME/.ssh/id_ed25519" cat /etc/resolv.conf)
  is "positive control: natively, a stub-resolv.conf symlink into ~/.ssh reads the key" "$native" "$key"
  out=$(attack ../run/systemd/resolve/stub-resolv.conf "$UHOME/.ssh/id_ed25519" env HOME="$UHOME" \
    timeout 60 "$FSGATE_RUN" --quiet --net -- sh -c 'cat /etc/resolv.conf 2>/dev/null || echo refused')
  is "--net: a known resolver path that is itself a symlink is not followed" "$out" "refused"
  out=$(attack ../run/systemd/resolve/stub-resolv.conf "" timeout 60 "$FSGATE_RUN" --quiet --net \
    --deny-read /run/systemd/resolve -- sh -c 'cat /etc/resolv.conf 2>/dev/null || echo refused')
  is "--net: a resolver file denied by a rule of its own stays denied" "$out" "refused"
  mkdir -p "$TESTDIR/runfs"
  out=$(attack ../run/other/resolv.conf "" sh -c 'echo "nameserver 10.0.0.1" > /run/other/resolv.conf; exec "$@"' sh \
    timeout 60 "$FSGATE_RUN" --quiet --net -- sh -c 'cat /etc/resolv.conf 2>/dev/null || echo refused')
  is "--net: a resolv.conf into /run at an unknown path is not bound" "$out" "refused"
  rm -f "$TESTDIR/etc/resolv.conf"; ln -s ../run/systemd/resolve/stub-resolv.conf "$TESTDIR/etc/resolv.conf"
else
  skip "DNS with --net and a resolv.conf symlink into /run" "root (private mount namespace)"
fi

# --- an installed profile, copied and edited, is the whole policy ---------------------------------
prof="${FSGATE_BUILDDIR:-$(dirname "$0")/../..}/docs/workspace-write.ini"
if [ -r "$prof" ]; then
  sed 's/^secret-names = \.env;/secret-names = /' "$prof" > "$TESTDIR/mine.ini"
  echo "dotenv" > "$WORK/.env"
  is "a copy of workspace-write.ini without .env, passed with -p, lets .env be read" \
    "$(run_fsg -p "$TESTDIR/mine.ini" -- cat .env 2>&1)" "dotenv"
  is "... while the built-in profile denies it" "$(run_fsg -- cat .env 2>&1)" "cat: .env: Permission denied"
  check "... the installed file names its base: profile = none" grep -q '^profile = none$' "$prof"
  rm -f "$WORK/.env"
else
  skip "installed profile copies" "docs/workspace-write.ini in the build directory"
fi

# --- --help of mount and explain: only what they use ------------------------------------------------
check "fsgate mount --help does not list runner-only options" \
  bash -c '! "$1" mount --help-all | grep -Eq -- "--(timeout|kill-after|output-cap|net)\b"' _ "$FSGATE"
check "fsgate explain --help does not list --timeout/--kill-after/--output-cap" \
  bash -c '! "$1" explain --help-all | grep -Eq -- "--(timeout|kill-after|output-cap)\b"' _ "$FSGATE"
check "fsgate-run --help-policy still lists them" bash -c '"$1" --help-policy | grep -q -- "--timeout"' _ "$FSGATE_RUN"

# --- fsgate mount --audit-log - ---------------------------------------------------------------------
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$TESTDIR/mnt" "$TESTDIR/src" && echo s > "$TESTDIR/src/.env"
  (cd "$TESTDIR" && exec timeout 60 "$FSGATE" mount -f --profile none --ro "$TESTDIR/src" \
    --deny-read "$TESTDIR/src/.env" --audit-log - "$TESTDIR/mnt" > "$TESTDIR/audit.out") & mp=$!
  track $mp
  wait_until mountpoint -q "$TESTDIR/mnt"
  cat "$TESTDIR/mnt$TESTDIR/src/.env" >/dev/null 2>&1
  umount "$TESTDIR/mnt"; wait $mp
  check "mount --audit-log - writes the events to stdout" grep -q '"path"' "$TESTDIR/audit.out"
  check "... and no file named '-'" test ! -e "$TESTDIR/-"
else
  skip "mount --audit-log -" "root (fsgate mount without fusermount3)"
fi

# --- no stray byte under a terminal -----------------------------------------------------------------
if command -v script >/dev/null; then
  out=$(timeout 30 script -qec "$FSGATE_RUN -- echo hi" /dev/null </dev/null | od -An -c | tr -s ' ')
  is "under a terminal (script, no input) the output is exactly the command's" "$out" " h i \r \n"
  # input queued before the run (piped into script's terminal) is echoed once, as natively
  cmd="sh -c 'read a; echo got=\$a; cat'"
  native=$(printf 'line1\nline2\n' | timeout 30 script -qec "$cmd" /dev/null | od -An -c | tr -s ' ')
  out=$(printf 'line1\nline2\n' | timeout 30 script -qec "$FSGATE_RUN -q -- $cmd" /dev/null | od -An -c | tr -s ' ')
  is "under a terminal, input typed or piped before the run is echoed once, as natively" "$out" "$native"
else
  skip "no stray byte under a terminal" "script (bsdutils)"
fi

done_testing
