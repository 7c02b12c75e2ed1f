#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Git planting (security suite, issue 11, threats.md §7 row 19): for each
# technique, a command plants something meant to make the host's git run a
# program, then the host runs `git status` and `git commit --allow-empty` in
# the repository root, a subdirectory, a submodule and a linked worktree
# (and in a repository the plant made, when there is one). Each technique
# first runs without the sandbox (the positive control: the payload must
# run), then through fsgate-run (the payload must not run).
. "$(dirname "$0")/../run/libtest.sh"
require_fsgate
command -v git >/dev/null || { echo "1..0 # SKIP git is not installed"; exit 0; }

export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
export GIT_CONFIG_NOSYSTEM=1 HOME="$TESTDIR/home"
mkdir -p "$HOME"
git config --global init.defaultBranch main
git config --global protocol.file.allow always
git config --global safe.directory '*'

# The repository the submodule comes from.
git init -q "$TESTDIR/src"
echo s > "$TESTDIR/src/s"
git -C "$TESTDIR/src" add s
git -C "$TESTDIR/src" commit -qm src

# fixture DIR [hookspath]: DIR/repo (with sub/dir, a submodule sm, and a
# nested repository nested/ whose config has core.hooksPath = .husky) and
# its linked worktree DIR/wt, all inside DIR, the workspace. With
# "hookspath", repo itself has core.hooksPath = .hk.
fixture () {
  local d=$1
  mkdir -p "$d"
  git init -q "$d/repo"
  mkdir -p "$d/repo/sub/dir"
  echo a > "$d/repo/sub/dir/a"
  git -C "$d/repo" add -A
  git -C "$d/repo" commit -qm one
  git -C "$d/repo" submodule -q add "$TESTDIR/src" sm 2>/dev/null
  git -C "$d/repo" commit -qm sm
  git -C "$d/repo" worktree add -q "$d/wt" 2>/dev/null
  git init -q "$d/repo/nested"
  git -C "$d/repo/nested" config core.hooksPath .husky
  mkdir "$d/repo/nested/.husky"
  git -C "$d/repo/nested" commit -q --allow-empty -m nested
  if [ "${2:-}" = hookspath ]; then
    git -C "$d/repo" config core.hooksPath .hk
    mkdir "$d/repo/.hk"
  fi
}

# probes DIR: the host's git in every place; prints nothing itself.
probes () {
  local d=$1 w
  for w in repo repo/sub/dir repo/sm wt repo/sub/dir/x repo/nested; do
    [ -d "$d/$w" ] || continue
    (cd "$d/$w" && git status >/dev/null 2>&1 && git commit -q --allow-empty -m probe >/dev/null 2>&1) </dev/null
  done
}

# plant NAME SCRIPT: SCRIPT runs with cwd = the workspace and $M = the
# marker file the payload appends to (outside the workspace).
# GIT_PLANT_POLICY=FILE adds a policy file to the sandboxed runs (with
# "git = off" every fsgate-run probe must fail: the test can fail).
n_case=0
plant () {
  local name=$1 script=$2 ctl="$TESTDIR/c$n_case" sbx="$TESTDIR/s$n_case"
  n_case=$((n_case + 1))
  fixture "$ctl" "${3:-}"
  # $M is set in the script: fsgate-run does not pass the environment on
  (cd "$ctl" && sh -c "M='$TESTDIR/mark-c$n_case'; $script" >/dev/null 2>&1)
  probes "$ctl"
  if [ -s "$TESTDIR/mark-c$n_case" ]; then
    ok "control: $name runs a program as the host user without the sandbox"
  else
    not_ok "control: $name runs a program as the host user without the sandbox"
  fi
  fixture "$sbx" "${3:-}"
  (cd "$sbx" && run_fsg ${GIT_PLANT_POLICY:+--policy "$GIT_PLANT_POLICY"} \
     --json "$TESTDIR/r$n_case.json" \
     -- sh -c "M='$TESTDIR/mark-s$n_case'; $script" >"$TESTDIR/out$n_case" 2>&1)
  probes "$sbx"
  if [ -e "$TESTDIR/mark-s$n_case" ]; then
    not_ok "fsgate-run: $name planted nothing"
    diag "$(cat "$TESTDIR/out$n_case")"
  else
    ok "fsgate-run: $name planted nothing"
  fi
}

# The payload: a program in the workspace ($PWD/p) that appends to $M.
P='printf "#!/bin/sh\necho ran >> $M\n" > p; chmod +x p;'
HOOK='printf "#!/bin/sh\necho ran >> $M\n"'
# An attacker's git dir .x/ (objects, refs) whose config runs p.
EVIL='mkdir -p .x/objects .x/refs; cp -r repo/.git/objects repo/.git/refs .x/ 2>/dev/null; printf "ref: refs/heads/main\n" > .x/HEAD; printf "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = $PWD/p\n" > .x/config;'

plant "a pre-commit hook written in .git/hooks" \
  "$HOOK > repo/.git/hooks/pre-commit; chmod +x repo/.git/hooks/pre-commit"
plant "a hook moved into .git/hooks" \
  "$HOOK > h; chmod +x h; mv h repo/.git/hooks/post-commit"
plant "a sample hook filled and renamed" \
  "$HOOK > repo/.git/hooks/pre-commit.sample; mv repo/.git/hooks/pre-commit.sample repo/.git/hooks/pre-commit"
plant "a hook symlinked into .git/hooks" \
  "$HOOK > h; chmod +x h; ln -s \$PWD/h repo/.git/hooks/pre-commit"
plant "a hook hard-linked into .git/hooks" \
  "$HOOK > h; chmod +x h; ln h repo/.git/hooks/pre-commit"
plant "a hooks dir replaced by a symlink" \
  "mkdir hk; $HOOK > hk/pre-commit; chmod +x hk/pre-commit; rm -rf repo/.git/hooks; ln -s \$PWD/hk repo/.git/hooks"
plant "a hooks dir replaced by a renamed one" \
  "mkdir hk; $HOOK > hk/pre-commit; chmod +x hk/pre-commit; rm -rf repo/.git/hooks; mv hk repo/.git/hooks"
plant "core.fsmonitor set with git config" \
  "$P git -C repo config core.fsmonitor \$PWD/p"
plant "core.fsmonitor appended to .git/config" \
  "$P printf '[core]\n\tfsmonitor = %s/p\n' \$PWD >> repo/.git/config"
plant "a config renamed over .git/config" \
  "$P cp repo/.git/config c; printf '[core]\n\tfsmonitor = %s/p\n' \$PWD >> c; mv c repo/.git/config"
plant "a config.lock left open and written after the rename" \
  "$P cp repo/.git/config c; python3 -c 'import os; f=open(\"c\",\"a\"); os.rename(\"c\",\"repo/.git/config\"); f.write(\"[core]\\n\\tfsmonitor = \" + os.getcwd() + \"/p\\n\"); f.close()'"
plant "core.hooksPath to a planted dir" \
  "mkdir hk; $HOOK > hk/pre-commit; chmod +x hk/pre-commit; git -C repo config core.hooksPath \$PWD/hk"
plant "a hook in the existing core.hooksPath of the workspace's repository" \
  "$HOOK > repo/.hk/pre-commit; chmod +x repo/.hk/pre-commit" hookspath
plant "a hook moved into the existing core.hooksPath of a nested repository" \
  "$HOOK > h; chmod +x h; mv h repo/nested/.husky/pre-commit"
plant "a hook written in the existing core.hooksPath of a nested repository" \
  "$HOOK > repo/nested/.husky/post-commit; chmod +x repo/nested/.husky/post-commit"
plant "include.path to a planted file" \
  "$P printf '[core]\n\tfsmonitor = %s/p\n' \$PWD > inc; git -C repo config include.path \$PWD/inc"
plant "config.worktree with extensions.worktreeConfig" \
  "$P git -C repo config extensions.worktreeConfig true; printf '[core]\n\tfsmonitor = %s/p\n' \$PWD > c; mv c repo/.git/config.worktree"
plant "a linked worktree's config.worktree (.git/worktrees/wt/config.worktree)" \
  "$P git -C repo config extensions.worktreeConfig true; git -C wt config --worktree core.fsmonitor \$PWD/p"
plant "a commondir redirection (.git/commondir to an attacker dir)" \
  "$P $EVIL echo \$PWD/.x > repo/.git/commondir"
plant "a worktree's commondir redirected" \
  "$P $EVIL echo \$PWD/.x > repo/.git/worktrees/wt/commondir"
plant "a .git file in a subdirectory (gitdir: to an attacker dir)" \
  "$P $EVIL echo gitdir: \$PWD/.x > repo/sub/.git"
plant "a submodule's config (.git/modules/sm/config)" \
  "$P git -C repo/sm config core.fsmonitor \$PWD/p"
plant "a submodule's hooks (.git/modules/sm/hooks)" \
  "$HOOK > repo/.git/modules/sm/hooks/pre-commit; chmod +x repo/.git/modules/sm/hooks/pre-commit"
plant "a new repository inside the tree (git init, then git config)" \
  "$P git init -q repo/sub/dir; git -C repo/sub/dir config core.fsmonitor \$PWD/p"
plant "a new .git dir made by hand, config before HEAD" \
  "$P mkdir repo/sub/dir/.git; printf '[core]\n\tfsmonitor = %s/p\n' \$PWD > repo/sub/dir/.git/config; cp -r repo/.git/objects repo/.git/refs repo/.git/HEAD repo/sub/dir/.git/"
plant "a config opened before its dir became a git dir, written after (gitdir: file)" \
  "$P cd repo; mkdir -p .x/objects; cp -r .git/objects/. .x/objects/; echo 'ref: refs/heads/main' > .x/HEAD; printf '[core]\n\trepositoryformatversion = 0\n' > .x/config; exec 3<>.x/config; cp -r .git/refs .x/refs; printf '[core]\n\tfsmonitor = %s/p\n' \$(dirname \$PWD) >&3; mv .git .gitold; echo 'gitdir: .x' > .git"
plant "a config opened before its dir was renamed to .git, written after" \
  "$P mkdir -p .x/objects; cp -r repo/.git/objects/. .x/objects/; echo 'ref: refs/heads/main' > .x/HEAD; printf '[core]\n\trepositoryformatversion = 0\n' > .x/config; exec 3<>.x/config; mv .x repo/sub/dir/.git; cp -r repo/.git/refs repo/sub/dir/.git/refs; printf '[core]\n\tfsmonitor = %s/p\n' \$PWD >&3"
plant "a git dir built elsewhere and renamed to .git" \
  "$P $EVIL mv .x repo/sub/dir/.git"
plant "a .git replaced by a symlink to an attacker dir" \
  "$P $EVIL ln -s \$PWD/.x repo/sub/dir/.git"
plant "the repository's .git renamed and replaced by a .git file" \
  "$P mv repo/.git repo/.g2 && echo gitdir: .g2 > repo/.git; git --git-dir=repo/.g2 config core.fsmonitor \$PWD/p"
plant "a clone with a template holding an executable hook" \
  "mkdir -p tpl/hooks; $HOOK > tpl/hooks/post-commit; chmod +x tpl/hooks/post-commit; git clone -q --template=\$PWD/tpl repo repo/sub/dir/x"
plant "a hook made executable after a plain write" \
  "$HOOK > repo/.git/hooks/pre-commit; chmod 755 repo/.git/hooks/pre-commit"

# init.templateDir of the host's global config inside the workspace: the
# hooks of every repository the host makes later come from there.
for mode in c s; do
  mkdir -p "$TESTDIR/t$mode/tpl/hooks"
  git config --global init.templateDir "$TESTDIR/t$mode/tpl"
  script="M='$TESTDIR/mark-t$mode'; $HOOK > tpl/hooks/post-commit; chmod +x tpl/hooks/post-commit"
  if [ $mode = c ]; then
    (cd "$TESTDIR/tc" && sh -c "$script") >/dev/null 2>&1
  else
    (cd "$TESTDIR/ts" && run_fsg ${GIT_PLANT_POLICY:+--policy "$GIT_PLANT_POLICY"} -- sh -c "$script") >/dev/null 2>&1
  fi
  git init -q "$TESTDIR/t$mode/later"
  (cd "$TESTDIR/t$mode/later" && git commit -q --allow-empty -m x) </dev/null >/dev/null 2>&1
  git config --global --unset init.templateDir
done
check "control: a hook planted in the global init.templateDir runs in a repository made later" \
  test -s "$TESTDIR/mark-tc"
check "fsgate-run: a hook planted in the global init.templateDir planted nothing" \
  test ! -e "$TESTDIR/mark-ts"

# core.worktree outside the workspace: the host's next checkout or reset
# writes the repository's files there ($HOME/.gitconfig with core.fsmonitor).
for mode in c s; do
  fixture "$TESTDIR/w$mode"
  mkdir -p "$TESTDIR/h$mode"
  script="M='$TESTDIR/mark-w$mode'; $P printf '[core]\n\tfsmonitor = %s/p\n' \$PWD > repo/.gitconfig; git -C repo add .gitconfig; git -C repo commit -qm g; git -C repo config core.worktree '$TESTDIR/h$mode'"
  if [ $mode = c ]; then
    (cd "$TESTDIR/w$mode" && sh -c "$script") >/dev/null 2>&1
  else
    (cd "$TESTDIR/w$mode" && run_fsg ${GIT_PLANT_POLICY:+--policy "$GIT_PLANT_POLICY"} -- sh -c "$script") >/dev/null 2>&1
  fi
  (cd "$TESTDIR/w$mode/repo" && git reset -q --hard && HOME="$TESTDIR/h$mode" git status) </dev/null >/dev/null 2>&1
done
check "control: core.worktree outside the workspace makes the host's reset write \$HOME/.gitconfig" \
  test -s "$TESTDIR/mark-wc"
check "fsgate-run: core.worktree outside the workspace planted nothing" \
  test ! -e "$TESTDIR/mark-ws"
check "fsgate-run: core.worktree outside the workspace is not in the config" \
  test -z "$(git -C "$TESTDIR/ws/repo" config core.worktree)"

# Rebase state: a rebase stopped on the host (a break), then the command
# puts an exec line in the todo list; the host's `git rebase --continue`
# runs it. Written in place, renamed over it, and a whole rebase-merge/
# replaced by a prepared one.
for mode in c s; do
  fixture "$TESTDIR/b$mode"
  git -C "$TESTDIR/b$mode/repo" commit -q --allow-empty -m two
  GIT_SEQUENCE_EDITOR="sed -i '1i break'" git -C "$TESTDIR/b$mode/repo" rebase -q -i HEAD~1 </dev/null >/dev/null 2>&1
  X="exec echo ran >> '$TESTDIR/mark-b$mode'"
  T=repo/.git/rebase-merge/git-rebase-todo
  script="echo \"$X\" >> $T; echo \"$X\" > t; mv t $T; cp -r repo/.git/rebase-merge rm2; echo \"$X\" > rm2/git-rebase-todo; rm -rf repo/.git/rebase-merge; mv rm2 repo/.git/rebase-merge"
  if [ $mode = c ]; then
    (cd "$TESTDIR/b$mode" && sh -c "$script") >/dev/null 2>&1
  else
    (cd "$TESTDIR/b$mode" && run_fsg ${GIT_PLANT_POLICY:+--policy "$GIT_PLANT_POLICY"} -- sh -c "$script") >/dev/null 2>&1
  fi
  git -C "$TESTDIR/b$mode/repo" rebase --continue </dev/null >/dev/null 2>&1
done
check "control: an exec line in a stopped rebase's todo list runs at the host's git rebase --continue" \
  test -s "$TESTDIR/mark-bc"
check "fsgate-run: an exec line in a stopped rebase's todo list planted nothing" \
  test ! -e "$TESTDIR/mark-bs"

# The denials carry the rule and reach the report.
cd "$TESTDIR" && mkdir -p rep && cd rep
fixture "$TESTDIR/rep"
run_fsg --json "$TESTDIR/rep.json" -- sh -c 'echo ../x > repo/.git/commondir; git -C repo config core.fsmonitor /bin/true' >/dev/null 2>&1
is "denials name the git-protect rule in the report" \
  "$(json_get "$TESTDIR/rep.json" '"; ".join(sorted(set(d["rule"].split(":")[0] + ":" + d["rule"].split(":")[1] for d in r["denials"])))')" \
  "git-protect: .git/commondir; git-protect: .git/config"

# .git files and symlinks the command makes are redirections: listed.
run_fsg --json "$TESTDIR/redir.json" -- sh -c 'echo gitdir: ../../.x > repo/sub/.git; ln -s ../../.x repo/sub/dir/.git; echo x > t; mv t repo/nested/.git 2>/dev/null; echo gitdir: .y > g; mv g .git' >/dev/null 2>&1
is "the report lists the .git files and symlinks the command made (git_redirects_created)" \
  "$(json_get "$TESTDIR/redir.json" '" ".join(sorted(p.replace("'"$TESTDIR/rep/"'", "") for p in r["git_redirects_created"]))')" \
  ".git repo/sub/.git repo/sub/dir/.git"

FSGATE=${FSGATE_BUILDDIR:-$(dirname "$FSGATE_RUN")/..}/fsgate/fsgate
is "fsgate explain explains the git-protect rules" \
  "$(cd "$TESTDIR/rep" && "$FSGATE" explain repo/.git/commondir repo/.git/config repo/.git/hooks/pre-commit | grep -o 'git-protect: [^:]*')" \
  "git-protect: .git/commondir
git-protect: .git/config
git-protect: hooks/pre-commit"

done_testing
