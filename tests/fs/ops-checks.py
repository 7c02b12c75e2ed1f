#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Helpers for test-fs-ops.sh: each subcommand prints one result line.
#
#   try-locks FILE          try flock(LOCK_EX|LOCK_NB) and a POSIX write lock
#                           without waiting: "flock=OK|EAGAIN fcntl=OK|EAGAIN"
#   hold-locks FILE READY   take both locks, write READY, hold until stdin ends
#   wait-lock FILE READY    write READY, then wait for a POSIX write lock
#                           (F_SETLKW) and print "got"
#   close-other FILE HOST   POSIX: lock through one fd, open a second fd of
#                           FILE, close it; can HOST (the same file) be locked
#                           by another process now? "released" or "held"
#   sqlite-hold DB READY    BEGIN EXCLUSIVE on DB, write READY, hold until stdin ends
#   sqlite-try DB           insert without waiting: "OK" or the error
#   sqlite-exec DB SQL      run SQL, print the rows (python's sqlite3: no CLI needed)
#   readdir-far DIR         seekdir() to 2**32 + 1 and readdir(): "end" or "entry NAME"
#   open-many DIR N         create N files and keep them open, then open N
#                           existing ones, opendir N times: the errors seen
#   race DIR HOSTDIR SECS   create names in DIR while unlinking them in
#                           HOSTDIR (the same directory on the host)
import ctypes
import errno
import fcntl
import os
import sqlite3
import sys
import time


def errname(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def try_locks(path):
    out = []
    f = open(path, 'r+')
    for name, fn in (('flock', lambda: fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)),
                     ('fcntl', lambda: fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB))):
        try:
            fn()
            out.append(name + '=OK')
        except OSError as e:
            out.append(name + '=' + ('EAGAIN' if e.errno in (errno.EAGAIN, errno.EACCES) else errname(e)))
    print(' '.join(out))


def hold_locks(path, ready):
    f = open(path, 'r+')
    fcntl.flock(f, fcntl.LOCK_EX)
    fcntl.lockf(f, fcntl.LOCK_EX)
    open(ready, 'w').close()
    sys.stdin.read()


def wait_lock(path, ready):
    f = open(path, 'r+')
    open(ready, 'w').close()
    fcntl.lockf(f, fcntl.LOCK_EX)
    print('got')


def close_other(path, host):
    a = os.open(path, os.O_RDWR)
    fcntl.lockf(a, fcntl.LOCK_EX | fcntl.LOCK_NB)
    b = os.open(path, os.O_RDONLY)
    os.close(b)
    code = 'import fcntl,sys\nf=open(sys.argv[1],"r+")\ntry:\n fcntl.lockf(f, fcntl.LOCK_EX|fcntl.LOCK_NB); print("released")\nexcept OSError: print("held")'
    import subprocess
    print(subprocess.run([sys.executable, '-c', code, host], capture_output=True, text=True).stdout.strip())
    os.close(a)


def sqlite_hold(db, ready):
    c = sqlite3.connect(db, timeout=0, isolation_level=None)
    c.execute('BEGIN EXCLUSIVE')
    c.execute('INSERT INTO t VALUES (1)')
    open(ready, 'w').close()
    sys.stdin.read()
    c.execute('COMMIT')


def sqlite_try(db):
    try:
        c = sqlite3.connect(db, timeout=0, isolation_level=None)
        c.execute('INSERT INTO t VALUES (2)')
        print('OK')
    except sqlite3.Error as e:
        print(str(e))


def sqlite_exec(db, sql):
    c = sqlite3.connect(db, isolation_level=None)
    for row in c.execute(sql):
        print('|'.join(str(x) for x in row))
    c.close()


class Dirent(ctypes.Structure):
    _fields_ = [('d_ino', ctypes.c_uint64), ('d_off', ctypes.c_int64),
                ('d_reclen', ctypes.c_ushort), ('d_type', ctypes.c_ubyte),
                ('d_name', ctypes.c_char * 256)]


def readdir_far(path):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.opendir.restype = ctypes.c_void_p
    libc.opendir.argtypes = [ctypes.c_char_p]
    libc.seekdir.argtypes = [ctypes.c_void_p, ctypes.c_long]
    libc.readdir.restype = ctypes.POINTER(Dirent)
    libc.readdir.argtypes = [ctypes.c_void_p]
    libc.closedir.argtypes = [ctypes.c_void_p]
    d = libc.opendir(path.encode())
    libc.seekdir(d, 2 ** 32 + 1)
    ent = libc.readdir(d)
    print('end' if not ent else 'entry ' + ent.contents.d_name.decode())
    libc.closedir(d)


def open_many(path, n):
    seen = set()
    keep = []
    for i in range(n):
        try:
            keep.append(os.open(os.path.join(path, 'c%d' % i), os.O_CREAT | os.O_RDWR, 0o644))
        except OSError as e:
            seen.add('create:' + errname(e))
    for i in range(n):
        try:
            keep.append(os.open(os.path.join(path, 'c%d' % i), os.O_RDONLY))
        except OSError as e:
            seen.add('open:' + errname(e))
    for i in range(n):
        try:
            keep.append(os.open(path, os.O_RDONLY | os.O_DIRECTORY))
        except OSError as e:
            seen.add('opendir:' + errname(e))
    for fd in keep:
        os.close(fd)
    print(' '.join(sorted(seen)) or 'none')


def race(path, hostpath, secs):
    names = ['r%d' % i for i in range(4)]
    end = time.time() + secs
    pids = []
    for role in ('create', 'create', 'unlink', 'unlink', 'stat'):
        pid = os.fork()
        if pid == 0:
            try:
                while time.time() < end:
                    for n in names:
                        try:
                            if role == 'create':
                                os.close(os.open(os.path.join(path, n), os.O_CREAT | os.O_WRONLY, 0o644))
                            elif role == 'unlink':
                                os.unlink(os.path.join(hostpath, n))
                            else:
                                os.stat(os.path.join(path, n))
                        except OSError:
                            pass
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    print('done')


if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    {'try-locks': lambda: try_locks(*args),
     'hold-locks': lambda: hold_locks(*args),
     'wait-lock': lambda: wait_lock(*args),
     'sqlite-hold': lambda: sqlite_hold(*args),
     'sqlite-try': lambda: sqlite_try(*args),
     'sqlite-exec': lambda: sqlite_exec(*args),
     'close-other': lambda: close_other(*args),
     'readdir-far': lambda: readdir_far(*args),
     'open-many': lambda: open_many(args[0], int(args[1])),
     'race': lambda: race(args[0], args[1], float(args[2])),
     }[cmd]()
