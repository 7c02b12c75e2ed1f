#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# fsgate-run basics: the view (writes inside/outside roots, deny-read), exit
# statuses, environment filtering, fds, capabilities, the --json report and
# output capping.
. "$(dirname "$0")/libtest.sh"
require_fsgate

mounts_before=$(fsg_mounts)

# --- the view -----------------------------------------------------------------
out=$(run_fsg -- sh -c 'echo hello > inside.txt && cat inside.txt')
is "runs a command in the working directory root" "$out" "hello"
is "a write inside the writable root reaches the host" "$(cat "$WORK/inside.txt")" "hello"

out=$(run_fsg -- sh -c "echo x > /etc/fsgate-outside-$MARK" 2>&1); rc=$?
check "a write outside every writable root fails" test "$rc" -ne 0
check "... with a read-only error" grep -q "Read-only file system" <<<"$out"
check "... and nothing appears on the host" test ! -e "/etc/fsgate-outside-$MARK"

mkdir -p "$TESTDIR/ro"
echo orig > "$TESTDIR/ro/f"
out=$(run_fsg --ro "$TESTDIR/ro" -- sh -c "echo changed > $TESTDIR/ro/f; rm -f $TESTDIR/ro/f" 2>&1)
is "a --ro root stays unchanged" "$(cat "$TESTDIR/ro/f")" "orig"

echo "TOPSECRET-$MARK" > "$WORK/.env"
echo "TOPSECRET2-$MARK" > "$TESTDIR/secret.txt"
out=$(run_fsg --deny-read "$TESTDIR/secret.txt" -- sh -c "cat .env; cat $TESTDIR/secret.txt; head -c 100 .env" 2>&1); rc=$?
check "deny-read files are unreadable (exit status)" test "$rc" -ne 0
check "... Permission denied" grep -q "Permission denied" <<<"$out"
check "... and the secret never appears" bash -c '! grep -q TOPSECRET <<<"$1"' _ "$out"
rm -f "$WORK/.env"

is "uid and gid map to themselves" "$(run_fsg -- id -u):$(run_fsg -- id -g)" "$(id -u):$(id -g)"
is "stdin passes through" "$(echo piped | run_fsg -- cat)" "piped"

# --- exit statuses ----------------------------------------------------------
run_fsg -- sh -c 'exit 42'; is "the command's exit status" "$?" "42"
run_fsg -- sh -c 'kill -TERM $$'; is "death by SIGTERM gives 143" "$?" "143"
run_fsg -- sh -c 'kill -SEGV $$'; is "death by SIGSEGV gives 139" "$?" "139"
run_fsg -- "no-such-command-$MARK" 2>/dev/null; is "command not found gives 127" "$?" "127"
printf '#!/bin/sh\necho hi\n' > "$WORK/noexec.sh"; chmod 0644 "$WORK/noexec.sh"
run_fsg -- ./noexec.sh 2>/dev/null; is "a command that is not executable gives 126" "$?" "126"
run_fsg -C "$TESTDIR/does-not-exist" -- true 2>/dev/null; is "a missing -C directory gives 125" "$?" "125"
mkdir -p "$TESTDIR/a" "$TESTDIR/b"
err=$(run_fsg --profile none --rw "$TESTDIR/a" -C "$TESTDIR/b" -- true 2>&1); rc=$?
is "a working directory outside the view gives 125" "$rc" "125"
check "... with a one-line reason naming the fix" test "$(wc -l <<<"$err")" -eq 1 -a -n "$(grep -- '-C DIR' <<<"$err")"
run_fsg --no-such-option -- true 2>/dev/null; is "an unknown option gives 2" "$?" "2"
run_fsg 2>/dev/null; is "no command gives 2" "$?" "2"
out=$(run_fsg --json "$TESTDIR/r127.json" -- "no-such-command-$MARK" 2>/dev/null)
is "the report tells an exec failure from the command's status" \
  "$(json_get "$TESTDIR/r127.json" 'r["exit_code"], r["reason"]')" "(127, 'exec-error')"
run_fsg --json "$TESTDIR/r127b.json" -- sh -c 'exit 127'
is "... a command exiting 127 by itself is 'exited'" "$(json_get "$TESTDIR/r127b.json" 'r["reason"]')" "exited"

# --- environment ------------------------------------------------------------
env_out=$(env MY_API_TOKEN=t1 AWS_SECRET_ACCESS_KEY=t2 FOO_UNRELATED=bar FSGATE_SANDBOX=forged \
  DB_PASSWORD=pw Gcp_Credentials=c CI=true VIRTUAL_ENV=/v SSL_CERT_FILE=/etc/ssl/certs/x.pem \
  FSGATE_SANDBOX_FORGED=1 HOME="$HOME" PATH="$PATH" LANG=C.UTF-8 "$FSGATE_RUN" -- env)
check "secrets (TOKEN, SECRET, KEY, PASSWORD, CREDENTIAL) are dropped" \
  bash -c '! grep -Eq "MY_API_TOKEN|AWS_SECRET|DB_PASSWORD|Gcp_Credentials" <<<"$1"' _ "$env_out"
check "other variables are inherited (inherit = all)" \
  bash -c 'grep -q "^FOO_UNRELATED=bar$" <<<"$1" && grep -q "^CI=true$" <<<"$1" && grep -q "^VIRTUAL_ENV=/v$" <<<"$1" && grep -q "^SSL_CERT_FILE=" <<<"$1"' _ "$env_out"
v_err=$(env MY_API_TOKEN=t1 DB_PASSWORD=pw "$FSGATE_RUN" -v -- true 2>&1 >/dev/null)
check "-v lists the dropped variables" bash -c 'grep -q "environment: dropped .*MY_API_TOKEN" <<<"$1" && grep -q "DB_PASSWORD" <<<"$1"' _ "$v_err"
check "-v never prints their values" bash -c '! grep -q "=t1\|=pw" <<<"$1"' _ "$v_err"
check "core variables are kept" grep -q "^HOME=$HOME\$" <<<"$env_out"
check "FSGATE_SANDBOX=1 is set and cannot be forged" test "$(grep -c '^FSGATE_SANDBOX=' <<<"$env_out")" = 1 -a -n "$(grep '^FSGATE_SANDBOX=1$' <<<"$env_out")"
check "inherited FSGATE_SANDBOX* variables are stripped" bash -c '! grep -q FSGATE_SANDBOX_FORGED <<<"$1"' _ "$env_out"
check "FSGATE_SANDBOX_NETWORK_DISABLED=1 without network" grep -q '^FSGATE_SANDBOX_NETWORK_DISABLED=1$' <<<"$env_out"
check "... and absent with --net" bash -c '! "$FSGATE_RUN" --net -- env | grep -q NETWORK_DISABLED'

# --- process state --------------------------------------------------------------
status=$(run_fsg -- cat /proc/self/status)
for c in CapInh CapPrm CapEff CapBnd CapAmb; do
  is "$c is empty" "$(awk -v k="$c:" '$1==k {print $2}' <<<"$status")" "0000000000000000"
done
is "no_new_privs is set" "$(awk '$1=="NoNewPrivs:" {print $2}' <<<"$status")" "1"
is "a seccomp filter is active" "$(awk '$1=="Seccomp:" {print $2}' <<<"$status")" "2"
is "the command runs in its own session (setsid)" "$(run_fsg -- sh -c 'awk "{print (\$6 == \$1)}" /proc/$$/stat')" "1"
is "the command runs as a child of the sandbox init (pid 1)" "$(run_fsg -- sh -c 'awk "{print \$4}" /proc/$$/stat')" "1"
check "host processes are not visible in /proc" bash -c '! "$FSGATE_RUN" -- test -e /proc/$1' _ "$$"
is "/proc/<host pid>/root is not reachable" "$(run_fsg -- sh -c "ls /proc/$$/root/ >/dev/null 2>&1 && echo reachable || echo no")" "no"
check "the sandbox's /proc shows only its own few processes" test "$(run_fsg -- sh -c 'ls -d /proc/[0-9]* | wc -l')" -le 5

exec 7<"$TESTDIR"
is "an inherited fd >= 3 is closed" "$(run_fsg -- "$TRY_SYSCALL" fstat-fd 7)" "EBADF"
is "--pass-fd keeps it" "$(run_fsg --pass-fd 7 -- "$TRY_SYSCALL" fstat-fd 7)" "OK"
exec 7<&-
run_fsg --pass-fd 77 -- true 2>/dev/null; is "--pass-fd of a closed fd is a usage error" "$?" "2"

devs=$(run_fsg -- ls /dev | tr '\n' ' ')
is "/dev is minimal" "$devs" "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero "
is "/dev/null works" "$(run_fsg -- sh -c 'echo x > /dev/null && head -c 4 /dev/zero | wc -c')" "4"

# --- report -----------------------------------------------------------------------
echo "s3cr3t" > "$WORK/.env"
run_fsg --json "$TESTDIR/r.json" -- sh -c 'cat .env; exit 3' 2>/dev/null
is "--json: exit_code" "$(json_get "$TESTDIR/r.json" 'r["exit_code"]')" "3"
is "--json: signal, timed_out" "$(json_get "$TESTDIR/r.json" '(r["signal"], r["timed_out"])')" "(None, False)"
check "--json: duration_ms" test "$(json_get "$TESTDIR/r.json" 'r["duration_ms"]')" -ge 0
is "--json: sandbox_denied from the audit" "$(json_get "$TESTDIR/r.json" 'r["sandbox_denied"]')" "True"
is "--json: the denial names operation, path, rule and command" \
  "$(json_get "$TESTDIR/r.json" '[(d["path"], d["rule"].split()[0], d["command"], d["pid"] > 0, len(d["operation"]) > 0) for d in r["denials"]][0]')" \
  "('$WORK/.env', 'deny-read', 'cat', True, True)"
is "--json: policy summary" "$(json_get "$TESTDIR/r.json" '(r["policy"]["profile"], r["policy"]["network"])')" "('workspace-write', False)"
run_fsg --json "$TESTDIR/r0.json" -- sh -c 'echo "Permission denied; sandbox says no"'  >/dev/null
is "--json: sandbox_denied is false without a denial, whatever the output says" "$(json_get "$TESTDIR/r0.json" 'r["sandbox_denied"]')" "False"
rm -f "$WORK/.env"

out=$(run_fsg --json - -- sh -c 'echo cmd-output')
is "--json -: the report follows the command's output on stdout" "$(head -1 <<<"$out")" "cmd-output"
is "... and parses" "$(tail -n +2 <<<"$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["exit_code"])')" "0"

live=$(run_fsg --capture --output-cap 1000 --json "$TESTDIR/c.json" -- \
  sh -c 'head -c 2500 /dev/zero | tr "\0" o; printf HEAD-END; head -c 2500 /dev/zero | tr "\0" o; printf TAIL-END;
         head -c 5000 /dev/zero | tr "\0" e >&2; printf ERR-TAIL >&2' 2>/dev/null)
is "captured output still streams live (all of it)" "${#live}" "5016"
# issue 12: head AND tail, and how much was dropped in between
is "stdout keeps its first and last 500 bytes" \
  "$(json_get "$TESTDIR/c.json" '(r["stdout"][:500] == "o"*500, r["stdout"].endswith("o"*492 + "TAIL-END"), r["stdout_dropped_bytes"])')" \
  "(True, True, 4016)"
is "... with a marker saying how much was dropped there" \
  "$(json_get "$TESTDIR/c.json" '"[fsgate-run: 4016 bytes dropped here" in r["stdout"] and "HEAD-END" not in r["stdout"]')" "True"
is "stderr keeps its tail too" \
  "$(json_get "$TESTDIR/c.json" '(r["stderr"].endswith("ERR-TAIL"), r["stderr_dropped_bytes"])')" "(True, 4008)"
is "aggregate keeps 1/3 stdout and 2/3 stderr, each with its tail" \
  "$(json_get "$TESTDIR/c.json" '(len(r["aggregated_output"]), r["aggregated_output"].endswith("ERR-TAIL"), "TAIL-END" in r["aggregated_output"])')" "(1000, True, True)"
run_fsg --capture --output-cap 1000 --json "$TESTDIR/c2.json" -- \
  sh -c 'head -c 100 /dev/zero | tr "\0" o; head -c 5000 /dev/zero | tr "\0" e >&2' >/dev/null 2>&1
is "unused stdout share goes to stderr" "$(json_get "$TESTDIR/c2.json" '(r["aggregated_output"][:100], len(r["aggregated_output"]))')" "('$(printf 'o%.0s' $(seq 100))', 1000)"
# each cut in the aggregate is marked, for both streams (the stream's own marker may be cut out)
run_fsg --capture --output-cap 300 --json "$TESTDIR/c4.json" -- \
  sh -c 'for i in $(seq 200); do echo out$i; echo err$i >&2; done' >/dev/null 2>&1
is "aggregate: a marker at the cut of stdout and of stderr, in order, each naming the bytes" \
  "$(json_get "$TESTDIR/c4.json" '[__import__("re").sub(r"\d+", "N", l) for l in r["aggregated_output"].splitlines() if "(aggregated_output)]" in l]')" \
  "['[fsgate-run: N bytes of stdout dropped here (aggregated_output)]', '[fsgate-run: N bytes of stderr dropped here (aggregated_output)]']"
is "... each part is the head and tail of that stream's captured text, the counts add up, <= cap" \
  "$(python3 - "$TESTDIR/c4.json" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
a = r["aggregated_output"]
pat = r"\n\[fsgate-run: (\d+) bytes of %s dropped here \(aggregated_output\)\]\n"
m1 = re.search(pat % "stdout", a)
m2 = re.search(pat % "stderr", a)
cut = a.index("err1\n", m1.end())
res = [len(a) <= 300]
for m, lo, hi, name in ((m1, 0, cut, "stdout"), (m2, cut, len(a), "stderr")):
    head, tail, text = a[lo:m.start()], a[m.end():hi], r[name]
    res.append(text.startswith(head) and text.endswith(tail) and len(tail) > 0
               and len(head) + len(tail) + int(m.group(1)) == len(text))
print(res)
PY
)" "[True, True, True]"
run_fsg --capture -- true 2>/dev/null; is "--capture without --json is a usage error" "$?" "2"
run_fsg --capture --json "$TESTDIR/c3.json" -- sh -c 'printf "a\377\376b\n"' >/dev/null
is "invalid UTF-8 is replaced" "$(json_get "$TESTDIR/c3.json" 'r["stdout"]')" "a��b"

is "no FUSE mount left on the host" "$(fsg_mounts)" "$mounts_before"
done_testing
