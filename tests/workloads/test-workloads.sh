#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Real workflows, git-free, run natively and through fsgate-run with the
# default profile; each must give the same result both ways (issue 12):
#   venv + pip install of a wheel built here (no network), the system trust
#   store (Python's default SSL context, openssl x509), make -j2 of a small C
#   project, gcc with the working directory under /tmp, sqlite in WAL mode,
#   tar and rsync round trips, and an unprivileged user in a directory whose
#   group is not theirs (unmapped in the sandbox's user namespace).
# Each workload runs in a fresh copy of the same directory, natively first,
# then sandboxed, so paths in the output are identical.
. "$(dirname "$0")/../run/libtest.sh"
require_fsgate

PYTHON=${PYTHON:-python3}
SECS=${FSGATE_WORKLOAD_TIMEOUT:-120}
TMPRUN=$(mktemp -d /tmp/fsgate-workload.XXXXXX)
trap 'rm -rf "$TMPRUN"; _cleanup' EXIT

need () {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null && continue
    if [ -n "${FSGATE_TESTS_MUST_RUN:-}" ]; then
      not_ok "$WL: needs $t (install it: .ci/setup lists it)"
    else
      skip "$WL" "$t"
    fi
    return 1
  done
}

# workload NAME DIR SETUP SCRIPT: run SETUP then SCRIPT (bash) in DIR natively,
# recreate DIR, run SETUP natively and SCRIPT through fsgate-run; compare
# stdout and exit status.
workload () {
  local name=$1 dir=$2 setup=$3 script=$4 native sandboxed nrc src
  rm -rf "$dir"; mkdir -p "$dir"
  (cd "$dir" && bash -c "$setup") || { not_ok "$name: setup failed"; return; }
  native=$(cd "$dir" && timeout "$SECS" bash -c "$script" 2>"$TESTDIR/native.err"); nrc=$?
  rm -rf "$dir"; mkdir -p "$dir"
  (cd "$dir" && bash -c "$setup") || { not_ok "$name: setup failed"; return; }
  sandboxed=$(cd "$dir" && timeout "$SECS" "$FSGATE_RUN" --quiet -- bash -c "$script" 2>"$TESTDIR/sandbox.err"); src=$?
  if [ "$nrc" != 0 ]; then
    not_ok "$name: fails natively (status $nrc), so it proves nothing"
    diag "$(tail -5 "$TESTDIR/native.err")"
    return
  fi
  is "$name: same output and status through fsgate-run as natively" "$sandboxed
status $src" "$native
status $nrc"
  [ "$src" = 0 ] || diag "sandboxed stderr: $(tail -8 "$TESTDIR/sandbox.err")"
}

# --- venv + pip install of a local wheel (no network) ---------------------------------
WL="venv + pip install of a local wheel"
if need "$PYTHON" && "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null; then
  # a wheel is a zip with the package and its dist-info: built here, offline
  wheel_setup='mkdir wheels && '"$PYTHON"' - <<'"'"'PY'"'"'
import base64, hashlib, zipfile
files = {
    "tinypkg/__init__.py": "def hello():\n    return \"hello from tinypkg\"\n",
    "tinypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
    "tinypkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: fsgate-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
with zipfile.ZipFile("wheels/tinypkg-1.0-py3-none-any.whl", "w") as z:
    for name, text in files.items():
        data = text.encode()
        z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (name, digest, len(data)))
    record.append("tinypkg-1.0.dist-info/RECORD,,")
    z.writestr("tinypkg-1.0.dist-info/RECORD", "\n".join(record) + "\n")
PY'
  workload "$WL" "$TESTDIR/wl-venv" "$wheel_setup" "
    set -e
    $PYTHON -m venv .v
    .v/bin/python -m pip install -q --no-index --no-cache-dir --disable-pip-version-check --find-links wheels tinypkg
    .v/bin/python -c 'import tinypkg; print(tinypkg.hello())'
    .v/bin/python -m pip list --disable-pip-version-check --format=freeze | grep -i '^tinypkg'
    # pip's own CA bundle (certifi, in site-packages) is there and readable
    .v/bin/python -c 'from pip._vendor import certifi; print(open(certifi.where()).read().count(\"BEGIN CERTIFICATE\") > 0)'"
elif [ -n "${FSGATE_TESTS_MUST_RUN:-}" ]; then
  not_ok "$WL: needs $PYTHON with venv and ensurepip (python3-venv)"
else
  skip "$WL" "python3 venv/ensurepip (python3-venv)"
fi

# --- the system trust store --------------------------------------------------------------
WL="system trust store (python ssl, openssl x509)"
if need "$PYTHON" openssl; then
  cert=$(ls /etc/ssl/certs/*.pem 2>/dev/null | head -1)
  if [ -n "$cert" ]; then
    workload "$WL" "$TESTDIR/wl-ssl" ":" "
      set -e
      $PYTHON -c 'import ssl; n = ssl.create_default_context().cert_store_stats()[\"x509_ca\"]; print(\"CAs:\", n, n > 0)'
      openssl x509 -in '$cert' -noout -subject -fingerprint -sha256
      openssl verify -CApath /etc/ssl/certs '$cert' | sed 's/^.*: //'"
  else
    skip "$WL" "certificates in /etc/ssl/certs (ca-certificates)"
  fi
fi

# --- make -j2 of a small C project --------------------------------------------------------
WL="make -j2 of a small C project"
if need make gcc; then
  make_setup='for i in 1 2 3 4 5 6; do printf "int f%d(void){return %d;}\n" $i $i > f$i.c; done
printf "#include <stdio.h>\nint f1(void),f2(void),f3(void),f4(void),f5(void),f6(void);\nint main(void){printf(\"sum %%d\\\\n\",f1()+f2()+f3()+f4()+f5()+f6());return 0;}\n" > main.c
printf "OBJS = main.o f1.o f2.o f3.o f4.o f5.o f6.o\napp: \$(OBJS)\n\t\$(CC) -o \$@ \$(OBJS)\n%%.o: %%.c\n\t\$(CC) -O2 -c -o \$@ \$<\nclean:\n\trm -f app \$(OBJS)\n" > Makefile'
  workload "$WL" "$TESTDIR/wl-make" "$make_setup" "
    set -e
    make -j2 -s
    ./app
    ls *.o | wc -l
    make -s clean && ls"
fi

# --- gcc with the working directory under /tmp ---------------------------------------------
WL="gcc, mktemp and Python's tempfile with the working directory under /tmp"
if need gcc "$PYTHON"; then
  workload "$WL" "$TMPRUN/proj" 'printf "#include <stdio.h>\nint main(void){puts(\"hello\");return 0;}\n" > hello.c' "
    set -e
    gcc -O2 -o hello hello.c && ./hello
    t=\$(mktemp) && echo tmp-ok > \"\$t\" && cat \"\$t\" && rm \"\$t\"
    $PYTHON -c 'import tempfile, os; d = tempfile.gettempdir(); print(d); f = tempfile.NamedTemporaryFile(); print(os.path.dirname(f.name))'
    ls"
fi

# --- sqlite in WAL mode ---------------------------------------------------------------------------
WL="sqlite in WAL mode (two connections, checkpoint)"
if need "$PYTHON"; then
  workload "$WL" "$TESTDIR/wl-sqlite" ":" "
    $PYTHON - <<'PY'
import os, sqlite3
a = sqlite3.connect('db.sqlite')
print('mode', a.execute('PRAGMA journal_mode=WAL').fetchone()[0])
a.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
with a:
    a.executemany('INSERT INTO t (v) VALUES (?)', [('row%d' % i,) for i in range(2000)])
b = sqlite3.connect('db.sqlite')
print('reader sees', b.execute('SELECT count(*), sum(length(v)) FROM t').fetchone())
print('wal and shm exist', os.path.exists('db.sqlite-wal'), os.path.exists('db.sqlite-shm'))
with a:
    a.execute('UPDATE t SET v = v || \"!\" WHERE id % 2 = 0')
print('reader sees update', b.execute('SELECT count(*) FROM t WHERE v LIKE \"%!\"').fetchone())
print('checkpoint', a.execute('PRAGMA wal_checkpoint(TRUNCATE)').fetchone())
b.close(); a.close()
print('integrity', sqlite3.connect('db.sqlite').execute('PRAGMA integrity_check').fetchone()[0])
PY"
fi

# --- tar and rsync round trips ----------------------------------------------------------------------
WL="tar and rsync round trips"
if need tar rsync; then
  tree_setup='mkdir -p tree/a/b tree/empty && head -c 300000 /dev/urandom > tree/a/big.bin &&
printf "text\n" > tree/a/b/t.txt && chmod 0640 tree/a/b/t.txt && ln -s b/t.txt tree/a/link &&
printf "#!/bin/sh\necho run\n" > tree/run.sh && chmod 0755 tree/run.sh && touch -d @1700000000 tree/a/b/t.txt'
  workload "$WL" "$TESTDIR/wl-tar" "$tree_setup" "
    set -e
    tar cf t.tar tree && mkdir x && tar xpf t.tar -C x && diff -r --no-dereference tree x/tree && echo tar-same
    tar tvf t.tar | awk '{print \$1, \$3, \$6}' | sort
    rsync -a tree/ y/ && diff -r --no-dereference tree y && echo rsync-same
    printf 'more\n' >> tree/a/b/t.txt && rsync -a --delete --itemize-changes tree/ y/ | sort
    find y -printf '%p %m %s %l\n' | sort
    # times are the run's own: compare the copy with its source, not the
    # runs, in whole seconds (rsync itself compares times in seconds)
    diff <(cd tree && find . -printf '%p %Ts\n' | sort) <(cd y && find . -printf '%p %Ts\n' | sort) && echo mtimes-kept
    tar xpf t.tar -C x --overwrite && find x/tree/a/b/t.txt -printf '%T@\n' | cut -d. -f1"
fi

# --- an unprivileged user, in a directory whose group is not theirs -----------------------------------
# uid 65534 owns the directory, group root (gid 0, unmapped in the user's own
# user namespace); a mode-0200 file of theirs is writable too. The host lets
# the user write both: so must the sandbox (issue 12 item 3, the permission
# checks of the perms branch).
WL="unprivileged user, own directory with group root, mode-0200 file"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
   setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$FSGATE_RUN"; then
  unpriv () {
    local fuse_wrap=""
    if [ "$(stat -c %a /dev/fuse)" != 666 ]; then
      fuse_wrap="mkdir -p $TESTDIR/devfuse && mount -t tmpfs fsgate-test $TESTDIR/devfuse &&
        mknod -m 666 $TESTDIR/devfuse/fuse c 10 229 && mount --bind $TESTDIR/devfuse/fuse /dev/fuse &&"
    fi
    unshare -m --propagation private sh -c "$fuse_wrap exec setpriv --reuid=65534 --regid=65534 --clear-groups \"\$@\"" sh "$@"
  }
  up_setup () {
    rm -rf "$TESTDIR/wl-user"; mkdir -m 0775 "$TESTDIR/wl-user"
    printf 'old\n' > "$TESTDIR/wl-user/wo"; chmod 0200 "$TESTDIR/wl-user/wo"
    chown -R 65534:0 "$TESTDIR/wl-user"
  }
  # (ls shows mode and owner: inside, the unmapped group root is shown as
  # the overflow gid, as in any user namespace; the host keeps it, below)
  up_script='echo created > new.txt && cat new.txt && echo appended >> wo && mkdir sub && echo ok > sub/f && ls -n | awk "{print \$1, \$3, \$NF}"'
  up_setup
  native=$(cd "$TESTDIR/wl-user" && unpriv env HOME="$TESTDIR/wl-user" timeout "$SECS" sh -c "$up_script" 2>&1); nrc=$?
  up_setup
  sandboxed=$(cd "$TESTDIR/wl-user" && unpriv env HOME="$TESTDIR/wl-user" timeout "$SECS" "$FSGATE_RUN" --quiet -- sh -c "$up_script" 2>&1); src=$?
  is "$WL: same output and status through fsgate-run as natively" "$sandboxed
status $src" "$native
status $nrc"
  is "... the 0200 file got the line on the host, and kept its owner and group" \
    "$(cat "$TESTDIR/wl-user/wo"; stat -c '%u:%g %a' "$TESTDIR/wl-user/wo")" "old
appended
65534:0 200"
else
  skip "$WL" "root, setpriv and a build directory readable by uid 65534"
fi

done_testing
