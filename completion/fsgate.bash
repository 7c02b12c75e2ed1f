# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bash completion for fsgate(1) and fsgate-run(1). Installed under both
# names, since bash-completion looks completion files up by command name.

# The POLICY OPTIONS both tools share (policy/policy-cli.c).
_fsgate_policy_opts='--profile --policy -p --rw --ro --deny-read --deny-write
    --net --no-net --timeout --kill-after --output-cap --hide-denied'
# The same without the options only fsgate-run uses (mount and explain
# accept but do not list them).
_fsgate_view_opts='--profile --policy -p --rw --ro --deny-read --deny-write
    --net --no-net --hide-denied'
_fsgate_mount_opts='--profile --policy -p --rw --ro --deny-read --deny-write
    --hide-denied'
# Policy options that take a value as the next word.
_fsgate_policy_args='--profile --policy -p --rw --ro --deny-read --deny-write
    --timeout --kill-after --output-cap'
# The built-in profiles (fsg_policy_profile_names ()); the install test checks
# this list against the installed share/fsgate/profiles/*.ini.
_fsgate_profiles='workspace-write read-only none'

# Complete the value of a policy option; returns 1 when $1 takes no value.
_fsgate_policy_value()
{
    case $1 in
        --profile)
            COMPREPLY=($(compgen -W "$_fsgate_profiles" -- "$cur"))
            ;;
        --policy | -p)
            _filedir
            ;;
        --rw | --ro)
            _filedir -d
            ;;
        --deny-read | --deny-write)
            # a path or a glob: offer paths
            _filedir
            ;;
        --timeout | --kill-after)
            COMPREPLY=($(compgen -W '500ms 10s 2m 1h none' -- "$cur"))
            ;;
        --output-cap)
            COMPREPLY=($(compgen -W '64KiB 1MiB 16MiB' -- "$cur"))
            ;;
        *)
            return 1
            ;;
    esac
    return 0
}

_fsgate()
{
    local cur prev words cword split
    _init_completion -s || return

    if ((cword == 1)); then
        COMPREPLY=($(compgen -W 'explain policy mount --help --version' -- "$cur"))
        return
    fi

    local command=${words[1]} i
    local opts="$_fsgate_policy_opts -h --help"

    case $command in
        mount)
            opts="$_fsgate_mount_opts -h --help"
            opts+=' --audit-log --audit --xattr --foreground -f --debug -d --stats'
            case $prev in
                --audit-log | --stats)
                    _filedir
                    return
                    ;;
                --audit)
                    COMPREPLY=($(compgen -W 'denied all' -- "$cur"))
                    return
                    ;;
            esac
            ;;
        explain)
            opts="$_fsgate_view_opts --mount -h --help"
            ;;
        policy) ;;
        *)
            return
            ;;
    esac

    # after "--" only operands follow
    for ((i = 2; i < cword; i++)); do
        if [[ ${words[i]} == -- ]]; then
            case $command in
                explain) _filedir ;;
                mount) _filedir -d ;;
            esac
            return
        fi
    done

    _fsgate_policy_value "$prev" && return
    $split && return

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi

    case $command in
        explain) _filedir ;;
        mount) _filedir -d ;;
    esac
} &&
    complete -F _fsgate fsgate

_fsgate_run()
{
    local cur prev words cword split
    _init_completion -s || return

    # Options end at "--" or at the first word that is not an option (the
    # command); from there on, complete as for that command. This walks
    # COMP_WORDS, the index space _command_offset works in, where
    # `--opt=value` is three words.
    local takes_arg=" ${_fsgate_policy_args//$'\n'/ } -C --cwd --json --pass-fd "
    local i=1 w offset=
    while ((i < COMP_CWORD)); do
        w=${COMP_WORDS[i]}
        if [[ $w == -- ]]; then
            offset=$((i + 1))
            break
        elif [[ ${COMP_WORDS[i + 1]-} == = ]]; then
            ((i += 3))
        elif [[ $w == -* ]]; then
            if [[ $takes_arg == *" $w "* ]]; then
                ((i += 2))
            else
                ((i += 1))
            fi
        else
            offset=$i
            break
        fi
    done
    if [[ $offset ]]; then
        _command_offset "$offset"
        return
    fi

    _fsgate_policy_value "$prev" && return
    case $prev in
        -C | --cwd)
            _filedir -d
            return
            ;;
        --json)
            _filedir
            return
            ;;
        --pass-fd)
            COMPREPLY=($(compgen -W "$(command ls /proc/$$/fd 2>/dev/null)" -- "$cur"))
            return
            ;;
    esac
    $split && return

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$_fsgate_policy_opts -C --cwd --json
            --capture --filter-terminal --pass-fd --no-proc-fallback --doctor -v --verbose -q --quiet --version -h --help
            --help-all --help-policy --" -- "$cur"))
        return
    fi

    # the first word that is not an option is the command
    _command_offset "$COMP_CWORD"
} &&
    complete -F _fsgate_run fsgate-run

# ex: filetype=sh
