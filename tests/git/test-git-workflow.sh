#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Git workflows through fsgate-run (integration suite, issue 11): the same
# script runs natively and in the sandbox (default profile, git = protect)
# with fixed dates, so both must end with the same refs, trees and a clean
# `git fsck`. Also: a denied .env inside a checkout does not break status,
# add -A, stash or clean, and a linked worktree whose git dir and common dir
# live outside the workspace can commit.
. "$(dirname "$0")/../run/libtest.sh"
require_fsgate
command -v git >/dev/null || { echo "1..0 # SKIP git is not installed"; exit 0; }

# What the script needs from the environment is set inside it: fsgate-run
# passes only the core variables on.
PRE='set -e
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g () { git -c init.defaultBranch=main -c protocol.file.allow=always -c advice.detachedHead=false "$@"; }
'
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

# A repository outside the workspaces (read-only in the sandbox): clone,
# fetch and submodule add use it by path.
SRC="$TESTDIR/src"
bash -c "$PRE"'
g init -q "$1"; cd "$1"; echo s > s; g add s; g commit -qm src; echo t > t; g add t; g commit -qm src2' \
  _ "$SRC"

WORKFLOW='
g init -q a
cd a
printf ".env\n" > .gitignore
echo 1 > f; mkdir d; echo 2 > d/g
g add -A; g commit -qm one
g branch feat; g checkout -q feat; echo 3 >> f; g commit -qam feat1
g checkout -q main; echo 4 > h; g add h; g commit -qm main2
g merge -q --no-edit feat
g checkout -q -b topic HEAD~1; echo 5 > t; g add t; g commit -qm topic; g rebase -q main
echo dirty >> f; g stash -q; g stash pop -q; g commit -qam after-stash
echo junk > untracked; g clean -fdq
g config user.name someone; g config --unset user.name
g remote add src "$SRC"; g fetch -q src; g branch -q -u src/main topic
g -C d status --short >/dev/null
g tag v1
g submodule add -q "$SRC" sm; g commit -qm sm
g submodule update --init -q
g -C sm fetch -q; g -C sm checkout -q HEAD~1; g add sm; g commit -qm sm-down
g worktree add -q ../wt -b wtb
(cd ../wt && echo w > w && g add w && g commit -qm wt && g status --short >/dev/null)
g merge -q --no-edit wtb
g gc -q
g fsck --no-progress
cd ..
g clone -q "$SRC" c
g -C c fetch -q origin
g -C c checkout -q -b local; echo c > c/c; g -C c add c; g -C c commit -qm c
g init -q --bare b.git; g -C a push -q ../b.git main
echo done
'

# state DIR: refs and trees of every repository, and fsck, from the host.
state () {
  local d=$1 r
  for r in a a/sm c wt b.git; do
    echo "== $r"
    git -C "$d/$r" for-each-ref --format='%(refname) %(objectname)' | grep -v refs/stash || true
    git -C "$d/$r" rev-parse HEAD 'HEAD^{tree}' 2>&1
    git -C "$d/$r" ls-tree -r HEAD 2>&1 | md5sum
    git -C "$d/$r" fsck --no-progress 2>&1 && echo fsck-ok
  done
  git -C "$d/a" status --porcelain
  git -C "$d/a" stash list
  cat "$d/a/.env"
}

# a secret in the checkout (denied by the default profile), made by the host
mkdir -p "$TESTDIR/native/a" "$TESTDIR/sbx/a"
echo SECRET > "$TESTDIR/native/a/.env"
echo SECRET > "$TESTDIR/sbx/a/.env"
(cd "$TESTDIR/native" && bash -c "$PRE SRC='$SRC'; $WORKFLOW") >"$TESTDIR/native.out" 2>&1
is "the workflow runs natively" "$(tail -1 "$TESTDIR/native.out")" "done"
(cd "$TESTDIR/sbx" && run_fsg --json "$TESTDIR/sbx.json" -- bash -c "$PRE SRC='$SRC'; $WORKFLOW") \
  >"$TESTDIR/sbx.out" 2>&1
rc=$?
is "the workflow runs through fsgate-run (init, clone, fetch, commit, branch, merge, rebase, stash, clean, gc, fsck, submodule, worktree, git -C, push)" \
  "$rc $(tail -1 "$TESTDIR/sbx.out")" "0 done"
[ "$rc" = 0 ] || diag "$(tail -20 "$TESTDIR/sbx.out")"
state "$TESTDIR/native" > "$TESTDIR/native.state"
state "$TESTDIR/sbx" > "$TESTDIR/sbx.state"
if cmp -s "$TESTDIR/native.state" "$TESTDIR/sbx.state"; then
  ok "refs, trees and fsck are the same natively and in the sandbox"
else
  not_ok "refs, trees and fsck are the same natively and in the sandbox"
  diag "$(diff "$TESTDIR/native.state" "$TESTDIR/sbx.state" | head -30)"
fi
# (the workflow meets other denials: /sys from libc, clone's hard links
# into the read-only source, which git replaces by copies)
is "no git-protect denial during the workflow" \
  "$(json_get "$TESTDIR/sbx.json" 'len([d for d in r["denials"] if "git-protect" in d["rule"]])')" "0"
is "the report lists the git dirs the command created" \
  "$(json_get "$TESTDIR/sbx.json" '" ".join(sorted(p.replace("'"$TESTDIR/sbx/"'", "") for p in r["git_dirs_created"]))')" \
  "a/.git a/.git/modules/sm a/.git/worktrees/wt b.git c/.git"

# A denied .env that git does not ignore: status, add -A, stash -u and
# clean work and never see it; its content stays unreadable.
mkdir "$TESTDIR/env" && cd "$TESTDIR/env"
bash -c "$PRE"'g init -q r; cd r; echo 1 > f; g add f; g commit -qm one'
echo "SECRET-$MARK" > r/.env
out=$(run_fsg -- bash -c "$PRE"'cd r; g status --porcelain; echo 2 > x; g add -A; g commit -qm two;
  echo 3 >> f; echo u > u; g stash -u -q; g stash pop -q; g clean -fdq; g clean -fdxq; ls -a | tr "\n" " ";
  echo "$(cat .env 2>&1 | grep -c SECRET || true)"' 2>&1)
is "a denied .env is hidden from status, add -A, stash -u and clean" "$out" \
  ". .. .git f x 0"
is "the .env is still on the host, untouched" "$(cat r/.env)" "SECRET-$MARK"
is "and it was never committed" "$(git -C r ls-tree -r --name-only HEAD | tr '\n' ' ')" "f x "

# A linked worktree whose git dir and common dir live outside the
# workspace: fsgate-run makes them part of the view, git protection on.
bash -c "$PRE"'g init -q "$1/m"; cd "$1/m"; echo 1 > f; g add f; g commit -qm one; g worktree add -q "$1/lw" -b lwb' _ "$TESTDIR"
cd "$TESTDIR/lw"
out=$(run_fsg --json "$TESTDIR/lw.json" -- bash -c "$PRE"'echo 2 > g; g add g; g commit -qm lw; g branch lw2;
  g stash list; g config core.fsmonitor "$PWD/p" 2>/dev/null || echo refused; echo ok' 2>&1)
is "commit and branch from a linked worktree whose git dirs are outside the workspace" "$out" "refused
ok"
is "the commit is in the main repository" "$(git -C "$TESTDIR/m" log --format=%s -1 lw2) $(git -C "$TESTDIR/m" fsck --no-progress 2>&1 && echo fsck-ok)" "lw fsck-ok"
is "its config stayed protected" "$(git -C "$TESTDIR/m" config core.fsmonitor || echo unset)" "unset"
is "explain names where the git dirs came from" \
  "$(cd "$TESTDIR/lw" && "${FSGATE_BUILDDIR:-$(dirname "$FSGATE_RUN")/..}/fsgate/fsgate" explain "$TESTDIR/m/.git/refs" | awk '{print $1}') $(cd "$TESTDIR/lw" && "${FSGATE_BUILDDIR:-$(dirname "$FSGATE_RUN")/..}/fsgate/fsgate" explain "$TESTDIR/m/.git/refs" | grep -c "git-protect: common dir")" \
  "rw 1"

done_testing
