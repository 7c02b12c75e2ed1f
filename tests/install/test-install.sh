#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# `meson install` into a temporary DESTDIR, then check what was installed:
# the exact file list (nothing outside the prefix), the installed binaries,
# the man pages (rendered by man(1) without warnings, and naming every option
# of --help and every policy key of docs/policy.md), the example profiles,
# and the bash completion (loaded by name and completing real command lines).
# Environment (from tests/install/meson.build): FSGATE_BUILDDIR, FSGATE_SRCDIR,
# FSGATE_VERSION, FSGATE_PREFIX, FSGATE_BINDIR, FSGATE_MANDIR, FSGATE_DATADIR,
# FSGATE_COMPLETIONSDIR, FSGATE_PROFILES, FSGATE_MAN_PAGES, FSGATE_HAVE_MAN.

set -u

. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"

TESTDIR=$(mktemp -d "${TMPDIR:-/tmp}/fsgate-install-test.XXXXXX")
trap 'rm -rf "$TESTDIR"' EXIT
DEST=$TESTDIR/dest
BIN=$DEST$FSGATE_BINDIR
MAN=$DEST$FSGATE_MANDIR
COMPDIR=$DEST$FSGATE_COMPLETIONSDIR

# --- install ---------------------------------------------------------------
if meson install -C "$FSGATE_BUILDDIR" --destdir "$DEST" --no-rebuild >"$TESTDIR/install.log" 2>&1; then
    ok "meson install --destdir"
else
    not_ok "meson install --destdir"
    diag "$(cat "$TESTDIR/install.log")"
    done_testing
fi

expected=("$FSGATE_BINDIR/fsgate" "$FSGATE_BINDIR/fsgate-run"
          "$FSGATE_COMPLETIONSDIR/fsgate" "$FSGATE_COMPLETIONSDIR/fsgate-run")
for p in $FSGATE_PROFILES; do
    expected+=("$FSGATE_DATADIR/profiles/$p.ini")
done
if [ "$FSGATE_HAVE_MAN" = 1 ]; then
    for page in $FSGATE_MAN_PAGES; do
        expected+=("$FSGATE_MANDIR/man${page##*.}/$page")
    done
fi
is "installed files are exactly the expected list" \
   "$(cd "$DEST" && find . ! -type d | sed 's|^\.||' | LC_ALL=C sort)" \
   "$(printf '%s\n' "${expected[@]}" | LC_ALL=C sort)"

outside=$(cd "$DEST" && find . -mindepth 1 | sed 's|^\.||' | while read -r p; do
    case "$FSGATE_PREFIX/" in "$p"/*) continue ;; esac   # an ancestor of the prefix
    case "$p" in "$FSGATE_PREFIX" | "$FSGATE_PREFIX"/*) continue ;; esac
    echo "$p"
done)
is "nothing is installed outside the prefix $FSGATE_PREFIX" "$outside" ""

if [ -L "$COMPDIR/fsgate-run" ] && [ "$(readlink "$COMPDIR/fsgate-run")" = fsgate ] &&
   cmp -s "$COMPDIR/fsgate-run" "$FSGATE_SRCDIR/completion/fsgate.bash"; then
    ok "fsgate-run completion is a relative link to fsgate's"
else
    not_ok "fsgate-run completion is a relative link to fsgate's"
    diag "$(ls -l "$COMPDIR" 2>&1)"
fi

# --- the installed binaries ------------------------------------------------
check_version () {
    local tool=$1 out
    out=$("$BIN/$tool" --version 2>&1)
    if [ "$(printf '%s\n' "$out" | sed -n 1p)" = "$tool $FSGATE_VERSION" ] &&
       printf '%s\n' "$out" | grep -Eq '^libfuse 3\.[0-9]+(\.[0-9]+)? ' &&
       printf '%s\n' "$out" | grep -Eq '^libseccomp [0-9]+\.[0-9]+\.[0-9]+$' &&
       printf '%s\n' "$out" | grep -Fxq "kernel $(uname -r) $(uname -m)"; then
        ok "$tool --version: version, libfuse, libseccomp, kernel"
    else
        not_ok "$tool --version: version, libfuse, libseccomp, kernel"
        diag "$out"
    fi
}
check_version fsgate
check_version fsgate-run

cd "$TESTDIR" || exit 1
out=$("$BIN/fsgate" explain --profile none --ro /usr /usr/bin /etc 2>&1)
st=$?
is "installed fsgate explain --ro: decisions and exit status" \
   "$(printf '%s\n' "$out" | awk '{print $1, $2}') status $st" \
   "$(printf 'ro /usr/bin\nabsent /etc') status 1"
out=$("$BIN/fsgate" explain /etc/shadow "$TESTDIR" 2>&1)
st=$?
is "installed fsgate explain on the default profile" \
   "$(printf '%s\n' "$out" | awk '{print $1, $2}') status $st" \
   "$(printf 'deny /etc/shadow\nrw %s' "$TESTDIR") status 1"

for p in $FSGATE_PROFILES; do
    f=$DEST$FSGATE_DATADIR/profiles/$p.ini
    if out=$("$BIN/fsgate" policy --profile none --policy "$f" 2>&1) &&
       head -1 "$f" | grep -q "^# fsgate profile $p"; then
        ok "installed profile $p.ini is a valid policy file"
    else
        not_ok "installed profile $p.ini is a valid policy file"
        diag "$out"
    fi
done
is "installed workspace-write.ini gives the built-in decisions" \
   "$("$BIN/fsgate" explain --profile none --policy "$DEST$FSGATE_DATADIR/profiles/workspace-write.ini" \
        /etc/shadow /etc/passwd "$TESTDIR" "$TESTDIR/.env" | awk '{print $1}' | tr '\n' ' ')" \
   "$("$BIN/fsgate" explain --profile workspace-write \
        /etc/shadow /etc/passwd "$TESTDIR" "$TESTDIR/.env" | awk '{print $1}' | tr '\n' ' ')"

# --- man pages -------------------------------------------------------------
# The options each page must document, from the installed tools' --help.
help_options () { "$@" 2>&1 | grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+|-[a-zA-Z]'; }
page_options () {
    case $1 in
        fsgate.1)
            printf -- '--help\n--version\n'
            for c in explain policy mount; do help_options "$BIN/fsgate" "$c" --help; done ;;
        fsgate-run.1)
            help_options "$BIN/fsgate-run" --help-all ;;
        fsgate-policy.5)
            # every key of docs/policy.md's tables, every flag, every group
            # shellcheck disable=SC2016 # backquotes are Markdown
            {
                grep -oE '^\| `[a-z-]+`' "$FSGATE_SRCDIR/docs/policy.md" | tr -d '|` '
                grep -oE '^### `\[[a-z]+\]`' "$FSGATE_SRCDIR/docs/policy.md" | tr -d '#` '
            }
            help_options "$BIN/fsgate" policy --help | grep -vxE -- '-h|--help' ;;
    esac
}
page_statuses () {
    case $1 in
        fsgate.1) "$BIN/fsgate" --help | sed -n '/^Exit status/,$p' ;;
        fsgate-run.1) "$BIN/fsgate-run" --help | sed -n '/^Exit status/,/^$/p' ;;
    esac | grep -oE '\b(0|1|2|12[4-7])\b' | sort -u
}

if [ "$FSGATE_HAVE_MAN" != 1 ]; then
    skip "man pages render without warnings" "scdoc when configuring (the man pages were not built)"
elif ! command -v man >/dev/null; then
    skip "man pages render without warnings" "man (man-db)"
else
    for page in $FSGATE_MAN_PAGES; do
        f=$MAN/man${page##*.}/$page
        warnings=$(MANROFFSEQ='' MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
        is "man -l $page renders without warnings" "$warnings" ""

        # wide, so that no option is hyphenated across lines
        text=$(MANROFFSEQ='' MANWIDTH=250 man -l "$f" 2>/dev/null | sed 's/\xe2\x80\x90/-/g')
        missing=
        for s in NAME SYNOPSIS DESCRIPTION EXAMPLES FILES SECURITY "SEE ALSO"; do
            printf '%s\n' "$text" | grep -q "^$s\$" || missing+=" section:$s"
        done
        case $page in *.1)
            printf '%s\n' "$text" | grep -q '^EXIT STATUS$' || missing+=" section:EXIT-STATUS" ;;
        esac
        for o in $(page_options "$page" | sort -u); do
            printf '%s\n' "$text" | grep -qF -- "$o" || missing+=" $o"
        done
        for s in $(page_statuses "$page"); do
            printf '%s\n' "$text" | sed -n '/^EXIT STATUS$/,/^[A-Z]/p' | grep -qE "^ +$s(\$| )" ||
                missing+=" status:$s"
        done
        is "$page documents every section, option, key and exit status" "$missing" ""
    done
fi

# --- bash completion -------------------------------------------------------
BASH_COMPLETION=${BASH_COMPLETION:-/usr/share/bash-completion/bash_completion}
if [ ! -f "$BASH_COMPLETION" ]; then
    skip "bash completion" "bash-completion"
    done_testing
fi

# complete LINE...: print, for each line, COMPREPLY of the completion
# function registered for its first word, one line per candidate.
cat > "$TESTDIR/complete.sh" <<'SH'
source "$BASH_COMPLETION" || exit 1
# load by command name, as bash-completion does on the first Tab
BASH_COMPLETION_USER_DIR=${COMPDIR%/completions}
__load_completion fsgate-run || { echo "cannot load fsgate-run"; exit 1; }
__load_completion fsgate || { echo "cannot load fsgate"; exit 1; }
complete -p fsgate fsgate-run >/dev/null || exit 1
for line in "$@"; do
    COMP_LINE=$line
    COMP_POINT=${#line}
    read -ra COMP_WORDS <<<"$line"
    [[ $line == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    spec=$(complete -p "${COMP_WORDS[0]}")
    func=${spec#*-F }
    func=${func%% *}
    # compopt complains outside of a real completion; ignore it
    "$func" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
    printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort -u | tr '\n' ' '
    echo
done
SH
complete_line () {
    env -i PATH="$PATH" HOME="$TESTDIR" BASH_COMPLETION="$BASH_COMPLETION" COMPDIR="$COMPDIR" \
        bash --norc --noprofile "$TESTDIR/complete.sh" "$@" 2>&1
}

if [ "${COMPDIR##*/}" != completions ]; then
    skip "bash completion loads by command name" "a completionsdir named 'completions'"
    done_testing
fi

mkdir -p "$TESTDIR/cwd/subdir" && touch "$TESTDIR/cwd/subfile"
cd "$TESTDIR/cwd" || exit 1
# shellcheck disable=SC2086 # a space-separated list
profiles_sorted=$(printf '%s\n' $FSGATE_PROFILES | LC_ALL=C sort | tr '\n' ' ')
# LINE|EXPECTED (a space-separated list, sorted, as printed by complete.sh)
cases=(
    "fsgate ex|explain "
    "fsgate |--help --version explain mount policy "
    "fsgate explain --profile |$profiles_sorted"
    "fsgate-run --profile |$profiles_sorted"
    "fsgate mount --profile |$profiles_sorted"
    "fsgate explain --pro|--profile "
    "fsgate policy --hide|--hide-denied "
    "fsgate mount --aud|--audit --audit-log "
    "fsgate mount --audit |all denied "
    "fsgate explain --policy sub|subdir/ subfile "
    "fsgate explain --rw sub|subdir/ "
    "fsgate mount sub|subdir/ "
    "fsgate-run --pol|--policy "
    "fsgate-run --ca|--capture "
    "fsgate-run --qu|--quiet "
    "fsgate explain --mo|--mount "
    "fsgate mount --ti| "
    "fsgate explain --ti| "
    "fsgate policy --ti|--timeout "
    "fsgate-run --policy sub|subdir/ subfile "
    "fsgate-run -C sub|subdir/ "
    "fsgate-run --ro sub|subdir/ "
    "fsgate-run -- fsgat|fsgate fsgate-run "
    "fsgate-run --net --rw . -- fsgate ex|explain "
    "fsgate-run --timeout 10s fsgate explain --profile r|read-only "
)
for c in "${cases[@]}"; do
    line=${c%%|*}
    want=${c#*|}
    got=$(PATH="$BIN:$PATH" complete_line "$line")
    # directories come back with the trailing slash only under readline;
    # compare names
    is "completion of '$line'" "${got//\//}" "${want//\//}"
done

# the profile names in the completion are the installed (built-in) profiles
got=$(PATH="$BIN:$PATH" complete_line "fsgate explain --profile ")
is "completed profiles are the installed profiles" "$got" \
   "$(cd "$DEST$FSGATE_DATADIR/profiles" && find . -name '*.ini' | sed 's|^\./||; s/\.ini$//' | LC_ALL=C sort | tr '\n' ' ')"

done_testing
