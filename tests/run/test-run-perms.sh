#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Who checks permissions under fsgate-run: the host, with the caller's
# credentials (docs/security.md, "Permissions"). The same probe runs as an
# unprivileged user natively and through fsgate-run, on two copies of the
# same fixture, and must give the same answers and leave the same files:
# a directory of the user's whose group is not the user's (unmapped in the
# sandbox), a group-writable directory of root's through a supplementary
# group (unmapped too), a mode 0200 file (the writeback cache would read
# it), root's file and directory in the user's directory (removable, not
# writable), a root-owned directory (still refused). As root: access(W_OK) says
# EROFS in read-only places, as a read-only bind mount does.
. "$(dirname "$0")/libtest.sh"
require_fsgate

U=23456  # no passwd entry needed; not the overflow id, so a wrong owner shows
G=23457  # a supplementary group of U's

cat > "$TESTDIR/probe.sh" <<'EOF'
cd "$1" || exit 1
r () { if "$@" 2>/dev/null; then echo ok; else echo fail; fi; }
echo "create in own dir with group root: $(r touch own-rootgrp/f)"
echo "mkdir there: $(r mkdir own-rootgrp/sub)"
echo "rename there: $(r mv own-rootgrp/f own-rootgrp/g)"
echo "unlink there: $(r rm own-rootgrp/g)"
echo "test -w own dir with group root: $(r test -w own-rootgrp)"
echo "create in root's dir, group-writable for a supplementary group: $(r touch shared/f)"
echo "create in root's 0755 dir: $(r touch rootdir/f)"
echo "test -w root's 0755 dir: $(r test -w rootdir)"
echo "overwrite 2 bytes of the 0200 file: $(r sh -c 'printf ab | dd of=wo conv=notrunc status=none')"
echo "append to the 0200 file: $(r sh -c 'printf cd >> wo')"
echo "read the 0200 file: $(r cat wo)"
echo "test -w / -r the 0200 file: $(r test -w wo) $(r test -r wo)"
echo "truncate the 0200 file with O_TRUNC: $(r sh -c 'printf xyz > wo2')"
echo "write root's 0644 file in own dir: $(r sh -c 'echo x >> rootfile')"
echo "rename root's 0644 file in own dir: $(r mv rootfile-mv rootfile-moved)"
echo "remove root's 0644 file in own dir: $(r rm -f rootfile-rm)"
echo "remove root's empty dir in own dir: $(r rmdir rootempty)"
EOF
chmod 0644 "$TESTDIR/probe.sh"

# fixture DIR: the same starting point for both runs.
fixture () {
  mkdir -p "$1" && chmod 0755 "$1" && chown $U:$U "$1"
  mkdir "$1/own-rootgrp" && chown $U:0 "$1/own-rootgrp" && chmod 0755 "$1/own-rootgrp"
  mkdir "$1/shared" && chown 0:$G "$1/shared" && chmod 0775 "$1/shared"
  mkdir "$1/rootdir" && chmod 0755 "$1/rootdir"
  printf 12345 > "$1/wo" && chown $U:$U "$1/wo" && chmod 0200 "$1/wo"
  printf 12345 > "$1/wo2" && chown $U:$U "$1/wo2" && chmod 0200 "$1/wo2"
  for f in rootfile rootfile-mv rootfile-rm rootdir/inner; do echo root > "$1/$f"; done
  mkdir "$1/rootempty"
}
# What the host has afterwards, without names of the run.
host_state () {
  (cd "$1" && find . -mindepth 1 -printf '%p %U:%G %m %s\n' | sort; echo "wo: $(cat wo)"; echo "wo2: $(cat wo2)")
}

# U with the supplementary group G, on a /dev/fuse it may open: where the
# host keeps it root-only, a world-usable node in a private mount namespace.
unpriv () {
  local fuse_wrap=""
  if [ ! -w /dev/fuse ] || [ "$(stat -c %a /dev/fuse)" != 666 ]; then
    fuse_wrap="mkdir -p $TESTDIR/devfuse && mount -t tmpfs fsgate-test $TESTDIR/devfuse &&
      mknod -m 666 $TESTDIR/devfuse/fuse c 10 229 && mount --bind $TESTDIR/devfuse/fuse /dev/fuse &&"
  fi
  unshare -m --propagation private sh -c \
    "$fuse_wrap exec setpriv --reuid=$U --regid=$U --groups=$G \"\$@\"" sh "$@"
}

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
  skip "unprivileged runs decide permissions like the host" "root and setpriv"
elif ! setpriv --reuid=$U --regid=$U --clear-groups test -x "$FSGATE_RUN"; then
  skip "unprivileged runs decide permissions like the host" "a build directory usable by uid $U"
else
  fixture "$TESTDIR/native"
  fixture "$TESTDIR/view"
  native=$(cd "$TESTDIR/native" && setpriv --reuid=$U --regid=$U --groups=$G sh "$TESTDIR/probe.sh" . 2>&1)
  view=$(cd "$TESTDIR/view" && unpriv env HOME="$TESTDIR/view" \
    timeout -k 5 60 "$FSGATE_RUN" -- sh "$TESTDIR/probe.sh" . 2>&1)
  # positive controls: the host lets U do these
  check "natively, U creates in its own dir with group root" grep -qx "create in own dir with group root: ok" <<<"$native"
  check "natively, U writes its 0200 file" grep -qx "overwrite 2 bytes of the 0200 file: ok" <<<"$native"
  check "natively, U is refused in root's 0755 dir" grep -qx "create in root's 0755 dir: fail" <<<"$native"
  mapfile -t nl <<<"$native"
  mapfile -t vl <<<"$view"
  is "unprivileged: as many answers through fsgate-run as natively" "${#vl[@]}" "${#nl[@]}"
  for i in "${!nl[@]}"; do
    is "unprivileged: ${nl[$i]%%: *}" "${vl[$i]:-}" "${nl[$i]}"
  done
  is "unprivileged: the host has the same files afterwards" \
    "$(host_state "$TESTDIR/view")" "$(host_state "$TESTDIR/native")"
  # The owner and group the host records stay; inside, a directory the user
  # may write shows the user's own group in place of the unmapped root group.
  is "... the directory keeps its group on the host" "$(stat -c %u:%g "$TESTDIR/view/own-rootgrp")" "$U:0"
  out=$(cd "$TESTDIR/view" && unpriv env HOME="$TESTDIR/view" \
    timeout -k 5 60 "$FSGATE_RUN" -- stat -c %u:%g own-rootgrp rootdir/inner 2>&1)
  is "... shown inside with the user's group (writable) and the overflow ids (neither writable nor removable)" \
    "$out" "$U:$U
65534:65534"
  out=$(cd "$TESTDIR/view" && unpriv env HOME="$TESTDIR/view" \
    timeout -k 5 60 "$FSGATE_RUN" --json "$TESTDIR/view/report.json" -- touch rootdir/g 2>&1)
  is "unprivileged: a refusal by the host is not a sandbox denial" \
    "$(json_get "$TESTDIR/view/report.json" "[d for d in r['denials'] if 'rootdir' in (d.get('path') or '')]")" "[]"
fi

# --- access(2) in read-only places, as root -----------------------------------
cat > "$TESTDIR/access.py" <<'EOF'
import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
for p in sys.argv[1:]:
    r = libc.access(p.encode(), 2)
    print('%s: %s' % (p, 'ok' if r == 0 else errno.errorcode[ctypes.get_errno()]))
EOF
if [ "$(id -u)" = 0 ]; then
  mkdir "$TESTDIR/robind"
  out=$(unshare -m --propagation private sh -c \
    "mount --bind -o ro /usr/bin $TESTDIR/robind && python3 $TESTDIR/access.py $TESTDIR/robind" 2>&1)
  is "control: access(W_OK) on a read-only bind mount says EROFS" "$out" "$TESTDIR/robind: EROFS"
  is "control: natively root may write /usr/bin" "$(python3 "$TESTDIR/access.py" /usr/bin)" "/usr/bin: ok"
  echo secret > "$WORK/denied.txt"
  out=$(run_fsg --deny-read "$WORK/denied.txt" -- python3 "$TESTDIR/access.py" /usr/bin /etc/passwd "$WORK" "$WORK/denied.txt" 2>&1)
  is "root: access(W_OK) is EROFS in read-only places, ok in the workspace, EACCES when denied" "$out" \
"/usr/bin: EROFS
/etc/passwd: EROFS
$WORK: ok
$WORK/denied.txt: EACCES"
  out=$(run_fsg -- sh -c 'test -w /usr/bin && echo writable || echo read-only')
  is "root: test -w /usr/bin says read-only" "$out" "read-only"
  # root inside has no capabilities: the host's permissions for uid 0 apply
  printf x > "$WORK/theirs" && chown $U:$U "$WORK/theirs" && chmod 0644 "$WORK/theirs"
  out=$(run_fsg -- sh -c 'echo y > theirs' 2>&1); rc=$?
  check "root: a file of another user's with mode 0644 stays unwritable" test "$rc" -ne 0
  is "... unchanged on the host" "$(cat "$WORK/theirs")" "x"
fi

done_testing
